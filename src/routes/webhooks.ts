// /v1/webhooks: a creator's endpoints for sales, expiries, passes and new entries (wallet-signed; at most 5 per wallet),
// a test of one (a signed ping now) and each endpoint's delivery log. Deliveries are signed the Standard Webhooks way
// with the secret shown at registration.
import { Elysia, t } from 'elysia'
import type { Services } from './services.ts'
import type { WebhookDeliveryRecord, WebhookEndpointRecord } from '../models/index.ts'
import { walletAuth } from './wallet-auth.ts'
import { uuid } from './params.ts'
import { page, pageQuery, pageSize } from './pagination.ts'
import { errors, NoBody } from '../edge/openapi.ts'
import { CreatedWebhook, CreateWebhook, Page, Webhook, WebhookDelivery, WebhookTestResult } from '../models/index.ts'
import { TESTS_PER_WINDOW } from '../domain/webhooks.ts'

const webhookBody = ({ wallet_id: _, ...e }: WebhookEndpointRecord): Webhook => e as Webhook

const deliveryBody = ({ endpoint_id: _, subject_id: __, ...d }: WebhookDeliveryRecord): WebhookDelivery =>
  ({ ...d, next_attempt_at: d.status === 'pending' ? d.next_attempt_at : null }) as WebhookDelivery

const SIGNING =
  'Each delivery is a POST of JSON {type, timestamp, data} with the Standard Webhooks headers ' +
  'webhook-id (the same on every attempt of one delivery: deduplicate by it), webhook-timestamp ' +
  'and webhook-signature (v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>" under the secret>). ' +
  'Any 2xx answer delivers it; otherwise it is retried after 5 s, 5 min, 30 min, 2 h, 5 h and then ' +
  'every 10 h, for 24 hours.'

export const webhookRoutes = (s: Services) =>
  new Elysia({ prefix: '/v1/webhooks', tags: ['Webhooks'] })
    .use(walletAuth(s.auth))
    .post(
      '',
      async ({ body, signer, set }) => {
        const { endpoint, secret } = await s.webhooks.register(signer, body)
        set.status = 201
        return { ...webhookBody(endpoint), secret }
      },
      {
        wallet: true,
        body: CreateWebhook,
        response: { 201: CreatedWebhook, ...errors(403) },
        detail: {
          summary: 'Register a webhook endpoint',
          description:
            `Tells the signing wallet's endpoint of each sale of its entries recorded in the ledger ` +
            `(sale.recorded: entry, feed, amount, payer, transaction hash) and of each paid entry of its ` +
            `whose early access ended (entry.expired), each pass to its feeds sold (pass.sold), each holder's ` +
            `time with a feed run out (pass.expired) and each entry published in its feeds (entry.published). ` +
            `At most 5 per wallet (403 WEBHOOK_LIMIT_REACHED). The ` +
            `url must be an https URL on the public internet (400 INVALID_WEBHOOK_URL, its details saying ` +
            `which rule it broke). The secret is in this answer only. ${SIGNING}`,
        },
      },
    )
    .get('', async ({ signer }) => ({ data: (await s.webhooks.list(signer)).map(webhookBody) }), {
      wallet: true,
      response: { 200: t.Object({ data: t.Array(Webhook) }) },
      detail: { summary: "The signing wallet's webhook endpoints" },
    })
    .delete(
      '/:webhook_id',
      async ({ params, signer }) => {
        await s.webhooks.remove(signer, uuid(params.webhook_id, 'webhook_id'))
        return new Response(null, { status: 204 })
      },
      {
        wallet: true,
        response: { 204: NoBody('Removed: deliveries still owed to it are cancelled'), ...errors(403, 404) },
        detail: { summary: 'Remove a webhook endpoint (its wallet)' },
      },
    )
    .post('/:webhook_id/test', async ({ params, signer }) => s.webhooks.test(signer, uuid(params.webhook_id, 'webhook_id')), {
      wallet: true,
      response: { 200: WebhookTestResult, ...errors(403, 404) },
      detail: {
        summary: 'Send a test event to a webhook endpoint now (its wallet)',
        description:
          'POSTs a signed ping ({type: "ping", timestamp, data: {webhook_id}}, signed and sent as every delivery, ' +
          'to the same checks of the URL) to the endpoint at once, waits for the answer (5 s at most) and tells how ' +
          'it went: 200 whatever the endpoint answered. The ping is in the delivery log (event ping, never retried). ' +
          `At most ${TESTS_PER_WINDOW} tests of one endpoint a minute, one at a time, none while a delivery to it ` +
          'is in flight: 429 RATE_LIMITED with Retry-After.',
      },
    })
    .get(
      '/:webhook_id/deliveries',
      async ({ params, query, signer }) => {
        const id = uuid(params.webhook_id, 'webhook_id')
        const limit = pageSize(query.page_size)
        const scope = `webhook-deliveries:${id}`
        const rows = await s.webhooks.deliveries(signer, id, s.pages.decode<[number, string]>(scope, query.page_token), limit + 1)
        const result = page(rows, limit, s.pages, scope, (last) => [last.created_at, last.id])
        return { data: result.data.map(deliveryBody), pagination: result.pagination }
      },
      {
        wallet: true,
        query: t.Object(pageQuery),
        response: { 200: Page(WebhookDelivery, 'Deliveries, newest first'), ...errors(403, 404, 422) },
        detail: {
          summary: "A webhook endpoint's delivery log (its wallet)",
          description: 'Every event for this endpoint: its status, attempts, the last answer and the body sent.',
        },
      },
    )
