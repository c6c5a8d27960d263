// Round-trips amounts through a paymock server with a client made by
// openapi-typescript (the types, in schema.d.ts beside this file) and
// openapi-fetch, as a TypeScript merchant would use them. The interop
// tests generate the types, type-check this file strictly and run it.
import createClient from "openapi-fetch";
import type { components, paths } from "./schema";

declare const process: { argv: string[]; exitCode: number };

const [base, token, form] = process.argv.slice(2);
const client = createClient<paths>({ baseUrl: base, headers: { Authorization: `Bearer ${token}` } });

// The smallest, a precise and the largest amount: each must come back
// exactly, as the number or as the decimal string the server sent.
const amounts = ["0.01", "1234567.89", "999999999.99"];

function same(amount: number | string, want: string, where: string): void {
  const ok = form === "number" ? typeof amount === "number" && String(amount) === want : amount === want;
  if (!ok) {
    throw new Error(`${where}: amount ${JSON.stringify(amount)}, want ${want} as a ${form}`);
  }
}

async function main(): Promise<void> {
  for (const want of amounts) {
    const created = await client.POST("/api/v1/payments", {
      body: {
        amount: Number(want),
        currency: "USD",
        customer: { email: "jane@example.com", name: "Jane Doe" },
        description: `Order ${want}`,
        expires_in: 3600,
        metadata: { order_id: `ord_${want}` },
        success_url: "https://shop.example.com/success",
        cancel_url: "https://shop.example.com/cancel",
        mcc: 5732,
      },
    });
    if (!created.data) {
      throw new Error(`create ${want}: ${created.response.status} ${JSON.stringify(created.error)}`);
    }
    const p = created.data;
    same(p.amount, want, `create ${want}`);
    // A create answer's cancel_url is there: it needs no guard.
    const cancel: string = p.cancel_url;
    if (!cancel.startsWith("https://")) {
      throw new Error(`create ${want}: cancel_url ${JSON.stringify(cancel)}`);
    }
    // Without a card payment_method is null, and the types say it can be:
    // reading it unguarded would not compile.
    if (p.payment_method !== null) {
      throw new Error(`create ${want}: payment_method ${JSON.stringify(p.payment_method)}, want null`);
    }
    if (p.next_action === null || !p.next_action.url.startsWith("http")) {
      throw new Error(`create ${want}: a pending payment must have next_action.url`);
    }
    const got = await client.GET("/api/v1/payments/{id}", { params: { path: { id: p.id } } });
    if (!got.data) {
      throw new Error(`retrieve ${want}: ${got.response.status} ${JSON.stringify(got.error)}`);
    }
    same(got.data.amount, want, `retrieve ${want}`);
    // A merchant's typed fixture of a create answer, made from a payment:
    // it must compile (a create answer is a payment with its cancel_url).
    const fixture: components["schemas"]["CreatedPayment"] = { ...got.data, cancel_url: cancel };
    if (fixture.id !== p.id) {
      throw new Error(`retrieve ${want}: id ${fixture.id}, want ${p.id}`);
    }
    console.log(`${want} round-tripped as a ${form}`);
  }
}

main().catch((err: unknown) => {
  console.error(String(err));
  process.exitCode = 1;
});
