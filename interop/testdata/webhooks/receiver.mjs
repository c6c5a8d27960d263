// A merchant's webhook receiver in Node, for interop/webhooks_node_test.go:
// every delivery is verified on arrival, from its raw bytes and headers as
// Node's http module hands them over, with the Standard Webhooks reference
// library and with svix, against each secret its route was given.
//
// Usage: node receiver.mjs NPM_DIR (the folder of the package.json that
// installed both libraries)
//
//   PUT  /_routes/NAME    {"secrets": ["whsec_..."], "answers": [503]}: the
//                         secrets to verify NAME's deliveries with, and the
//                         statuses of its first deliveries; past those, 204
//                         when every check passed and 400 otherwise.
//   POST /hooks/NAME      a delivery.
//   GET  /_received/NAME  what NAME received, as a JSON array.

import { createServer } from "node:http";
import { createRequire } from "node:module";
import { join } from "node:path";

const require = createRequire(join(process.argv[2], "package.json"));
const libraries = {
  standardwebhooks: require("standardwebhooks").Webhook,
  svix: require("svix").Webhook,
};

const routes = new Map(); // name -> {secrets, answers, received}

function route(name) {
  if (!routes.has(name)) routes.set(name, { secrets: [], answers: [], received: [] });
  return routes.get(name);
}

// check runs one library on one delivery: the constructor takes the secret
// in the textual form paymock hands out, and verify takes the raw body.
function check(Webhook, secret, body, headers) {
  try {
    const event = new Webhook(secret).verify(body, headers);
    return { ok: true, id: event.id, type: event.type };
  } catch (err) {
    return { ok: false, error: `${err.name}: ${err.message}` };
  }
}

function receive(r, body, headers) {
  // A body parsed and re-serialised, as a JSON body parser would hand it
  // to a handler: it must not verify, or the raw-bytes cases prove nothing.
  let reencoded = null;
  try {
    reencoded = JSON.stringify(JSON.parse(body.toString("utf8")));
  } catch {}
  const rec = {
    received_at_ms: Date.now(),
    id: headers["webhook-id"] ?? "",
    timestamp: headers["webhook-timestamp"] ?? "",
    signature: headers["webhook-signature"] ?? "",
    body: body.toString("base64"),
    reencoded_differs: reencoded !== null && reencoded !== body.toString("utf8"),
    checks: [],
  };
  for (const [secretIndex, secret] of r.secrets.entries()) {
    for (const [library, Webhook] of Object.entries(libraries)) {
      const c = check(Webhook, secret, body, headers);
      c.library = library;
      c.secret = secretIndex;
      if (reencoded !== null) c.reencoded_ok = check(Webhook, secret, reencoded, headers).ok;
      rec.checks.push(c);
    }
  }
  const verified = rec.checks.length > 0 && rec.checks.every((c) => c.ok);
  rec.answered = r.answers.length > 0 ? r.answers.shift() : verified ? 204 : 400;
  r.received.push(rec);
  return rec.answered;
}

const server = createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const body = Buffer.concat(chunks);
    const [, kind, name] = req.url.split("/");
    if (req.method === "PUT" && kind === "_routes" && name) {
      const { secrets, answers } = JSON.parse(body.toString("utf8"));
      Object.assign(route(name), { secrets: secrets ?? [], answers: answers ?? [] });
      res.writeHead(204).end();
    } else if (req.method === "POST" && kind === "hooks" && name) {
      res.writeHead(receive(route(name), body, req.headers)).end();
    } else if (req.method === "GET" && kind === "_received" && name) {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(route(name).received));
    } else {
      res.writeHead(404).end();
    }
  });
});

server.listen(0, "127.0.0.1", () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`);
});
