// paymock under Testcontainers in Node: a test starts the image, waits for
// it, and drives a payment through with its webhook received by the test.
// docs/docker.md shows this file; scripts/docker-test.sh runs it with
// PAYMOCK_TEST_IMAGE set to the image scripts/image.sh built.
import { test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { once } from "node:events";
import { GenericContainer, Network, Wait, getContainerRuntimeClient } from "testcontainers";

const image = process.env.PAYMOCK_TEST_IMAGE;

test("paymock under Testcontainers", { skip: !image && "PAYMOCK_TEST_IMAGE is not set" }, async () => {
  // The test's webhook receiver, on the address containers reach this
  // machine by: the gateway of a network of the test's own.
  const network = await new Network().start();
  const runtime = await getContainerRuntimeClient();
  const inspected = await runtime.container.dockerode.getNetwork(network.getId()).inspect();
  const gateway = inspected.IPAM.Config.find((c) => c.Gateway)?.Gateway;
  assert.ok(gateway, `no gateway on ${network.getName()}: ${JSON.stringify(inspected.IPAM)}`);
  const hooks = [];
  const receiver = http.createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      hooks.push({ signature: req.headers["webhook-signature"], body: JSON.parse(body) });
      res.writeHead(204).end();
    });
  });
  receiver.listen(0, gateway);
  await once(receiver, "listening");
  const webhookURL = `http://${gateway}:${receiver.address().port}/hooks`;

  // docs-test region: paymock in a container
  const paymock = await new GenericContainer(image)
    .withExposedPorts(8080)
    .withNetwork(network)
    .withEnvironment({
      PAYMOCK_API_KEY: "sk_test_tc",
      PAYMOCK_WEBHOOK_URL: webhookURL,
      PAYMOCK_WEBHOOK_SECRET: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    })
    // Ready once /healthz answers (the image's HEALTHCHECK asks the same).
    .withWaitStrategy(Wait.forHttp("/healthz", 8080))
    .start();
  const base = `http://${paymock.getHost()}:${paymock.getMappedPort(8080)}`;
  // end of region

  try {
    const call = async (method, path, body) => {
      const res = await fetch(base + path, {
        method,
        headers: { Authorization: "Bearer sk_test_tc", "Content-Type": "application/json" },
        body: body && JSON.stringify(body),
      });
      assert.ok(res.ok, `${method} ${path}: ${res.status} ${await res.clone().text()}`);
      return res.json();
    };
    const payment = await call("POST", "/api/v1/payments", {
      amount: 10.5, currency: "EUR", description: "Order 1", expires_in: 3600, mcc: 5732,
      customer: { email: "jane@example.com", name: "Jane" }, metadata: {},
      success_url: "https://shop.example/ok", cancel_url: "https://shop.example/cancel",
    });
    assert.equal(payment.status, "pending");
    await call("POST", `/_sandbox/payments/${payment.id}/complete`);
    for (let i = 0; i < 150 && hooks.length === 0; i++) await new Promise((r) => setTimeout(r, 200));
    assert.equal(hooks.length, 1, `one webhook; paymock's journal: ${JSON.stringify(await call("GET", "/_sandbox/events"))}`);
    assert.equal(hooks[0].body.type, "payment.completed");
    assert.equal(hooks[0].body.data.id, payment.id);
    assert.match(hooks[0].signature, /^v1,/);
  } finally {
    await paymock.stop();
    await network.stop();
    receiver.close();
  }
});
