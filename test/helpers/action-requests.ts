/**
 * What the action requests' suites share (docs/design.md §21): the payment action type a website
 * registers, one action of it, and the website's requests over real HTTP (/bc-authorize, the
 * CIBA grant at /token).
 */
import type { ActionType } from '../../src/store/clients.ts';

/** A form POST to the server at `baseUrl`. */
const form = (baseUrl: string, path: string, fields: Record<string, string>) =>
  fetch(new URL(path, baseUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });

/** The action type every suite's website registers: "Pay {amount} {currency} to {payee}". */
export const PAYMENT: ActionType = {
  type: 'payment',
  description: 'Pay {amount} {currency} to {payee}',
  fields: {
    amount: { type: 'number', required: true },
    currency: { type: 'string', required: true },
    payee: { type: 'string', required: true },
  },
  amount_field: 'amount',
  currency_field: 'currency',
};

/** One action: pay 20 EUR to Acme. */
export const PAY_ACME = [{ type: 'payment', amount: 20, currency: 'EUR', payee: 'Acme' }];

/** OpenID CIBA's grant type. */
export const CIBA = 'urn:openid:params:grant-type:ciba';

/** A website as the suites hold it: its id and secret. */
export interface Site {
  clientId: string;
  clientSecret: string;
}

/** POST /bc-authorize with client_secret_post, as a form (a parameter given as undefined is left out). */
export function bcAuthorize(baseUrl: string, site: Site, params: Record<string, string | undefined>) {
  const given = Object.entries(params).filter((entry): entry is [string, string] => entry[1] !== undefined);
  return form(baseUrl, '/bc-authorize', {
    client_id: site.clientId,
    client_secret: site.clientSecret,
    ...Object.fromEntries(given),
  });
}

/** POST /token with the CIBA grant and the auth_req_id. */
export function cibaPoll(baseUrl: string, site: Site, authReqId: string) {
  return form(baseUrl, '/token', {
    grant_type: CIBA,
    auth_req_id: authReqId,
    client_id: site.clientId,
    client_secret: site.clientSecret,
  });
}
