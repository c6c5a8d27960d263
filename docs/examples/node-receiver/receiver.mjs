// A webhook endpoint that verifies paymock's deliveries with the
// Standard Webhooks library for JavaScript (npm package "standardwebhooks").
//
//   cd docs/examples/node-receiver && npm install
//   WEBHOOK_SECRET=whsec_... node receiver.mjs
//
// It listens on port 9000 (PORT to change it) and accepts POST /hooks.
import http from "node:http";
import { Webhook } from "standardwebhooks";

const secret = process.env.WEBHOOK_SECRET;
if (!secret) {
  console.error("set WEBHOOK_SECRET to the whsec_... secret paymock signs with");
  process.exit(1);
}
const wh = new Webhook(secret);
const port = Number(process.env.PORT ?? 9000);

http
  .createServer((req, res) => {
    if (req.method !== "POST" || req.url !== "/hooks") {
      res.writeHead(404).end();
      return;
    }
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => {
      // Verify the raw bytes, before any JSON parsing; verify() returns the
      // parsed event.
      const body = Buffer.concat(chunks);
      let event;
      try {
        event = wh.verify(body, req.headers);
      } catch (err) {
        console.error(`rejected a delivery: ${err.message}`);
        res.writeHead(400).end();
        return;
      }
      console.log(`verified ${event.id} ${event.type}: payment ${event.data.id} is ${event.data.status}`);
      res.writeHead(204).end(); // any 2xx marks the delivery delivered
    });
  })
  .listen(port, () => console.log(`listening on :${port}, POST /hooks`));
