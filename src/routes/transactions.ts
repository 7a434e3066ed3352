// /v1/transactions: the public ledger (by id, by hash, filtered list).
import { CHAINS } from '../config/networks.ts'
import { Elysia, t } from 'elysia'
import type { TransactionRecord } from '../models/records.ts'
import { publicTransactionId } from '../domain/transactions.ts'
import type { Services } from './services.ts'
import { jsonResponse } from '../edge/json-response.ts'
import { page, pageQuery, pageSize, queryKey } from './pagination.ts'
import { Transaction, TransactionList, type TransactionItem } from '../models/index.ts'
import { errors } from '../edge/openapi.ts'

/**
 * A payment as listed: the record without its piid, its id with the tx_ prefix, its amount as text. Lists serialise it
 * as it is: the record's fields come in the wire's order (the store's SELECT), as a feed's do.
 */
const item = ({ piid: _piid, ...r }: TransactionRecord): TransactionItem => ({
  ...r,
  id: publicTransactionId(r.id),
  amount: r.amount.toString(),
})
/** A payment read alone: as listed, with its piid. */
const full = (r: TransactionRecord): Transaction => ({ ...item(r), piid: r.piid })
const LIST_PARAMETERS = ['page_size', 'page_token', 'payer', 'pay_to', 'entry_id', 'feed_id', 'network'] as const

export const transactionRoutes = (s: Services) =>
  new Elysia({ prefix: '/v1/transactions', tags: ['Transactions'] })
    .get(
      '',
      async ({ query }) =>
        jsonResponse(
          await s.cached.get(`transactions${queryKey(query, LIST_PARAMETERS)}`, async () => {
            const limit = pageSize(query.page_size)
            const filter = s.transactions.validateFilter(query)
            const scope = 'transactions'
            const beforeId = s.pages.decode<string>(scope, query.page_token)
            const result = page(await s.transactions.list(filter, beforeId, limit + 1), limit, s.pages, scope, (last) => last.id)
            // The same list under data too, where the official SDK reads it; serialised once.
            const items = JSON.stringify(result.data.map(item))
            const pagination = JSON.stringify({ ...result.pagination, total_count: await s.transactions.count(filter) })
            return `{"transactions":${items},"data":${items},"pagination":${pagination}}`
          }),
          { 'cache-control': 'public, max-age=60' },
        ),
      {
        query: t.Object({
          ...pageQuery,
          payer: t.Optional(t.String({ description: 'payer address' })),
          pay_to: t.Optional(t.String({ description: 'recipient address' })),
          entry_id: t.Optional(t.String({ description: 'entry id' })),
          feed_id: t.Optional(t.String({ description: "feed id: its entries' sales and its passes'" })),
          network: t.Optional(t.String({ description: `the network the sales were settled on: ${Object.keys(CHAINS).join(', ')}` })),
        }),
        response: { 200: TransactionList, ...errors(422) },
        detail: {
          summary: 'List transactions',
          description:
            'Newest first; filters combine. 100 requests per hour per client; total_count is exact (with ' +
            'two or more filters, or network, it may be up to 60 s old).',
        },
      },
    )
    .get('/hash/:hash', async ({ params }) => full(await s.transactions.byHash(params.hash)), {
      response: { 200: Transaction, ...errors(404) },
      detail: { summary: 'Get a transaction by its on-chain hash', description: 'Only payments recorded by this service.' },
    })
    .get('/:id', async ({ params }) => full(await s.transactions.get(params.id)), {
      response: { 200: Transaction, ...errors(404) },
      detail: { summary: 'Get a transaction', description: 'The id with or without its tx_ prefix.' },
    })
