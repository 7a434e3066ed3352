// /v1/wallets: wallet profiles by id or address, and a wallet's own analytics.
import { Elysia, t } from 'elysia'
import { Analytics, ANALYTICS_CSV_COLUMNS, analyticsQuery, MAX_SERIES_POINTS, UpdateWallet, Wallet, WalletStats } from '../models/index.ts'
import { errors } from '../edge/openapi.ts'
import type { WalletRecord } from '../models/records.ts'
import type { Services } from './services.ts'
import { walletAuth } from './wallet-auth.ts'
import { jsonResponse } from '../edge/json-response.ts'
import { nowSeconds } from '../lib/clock.ts'
import { csvAnswer, wantsCsv } from './csv.ts'

/**
 * A wallet on the wire: the record, its money as text, and the SDK's names for address and network. Answered through
 * Elysia only, which writes the fields in the schema's order.
 */
export const walletBody = (w: WalletRecord): Wallet => ({
  ...w,
  wallet_address: w.address,
  wallet_address_network: w.network,
  total_revenue: w.total_revenue.toString(),
})

/**
 * One holder per wallet until the database changes, its text remade when the second or the ranks move on: a short
 * key and no numbers turned into text on every read. `remaking`: the one remake under way, which every request that
 * finds the text out of date awaits (else each request of a busy second's first moments would remake it again).
 */
interface StatsHolder {
  at: number
  generation: number
  text: string
  remaking: Promise<void> | null
}
const statsKey = (walletId: string) => `stats:${walletId}`

/** GET /v1/wallets/{id}/stats as JSON text, remade at most once a second. */
export async function walletStatsJson(s: Services, walletId: string): Promise<string> {
  const now = nowSeconds()
  const generation = s.stats.ranksGeneration()
  const held = await s.cached.get<StatsHolder>(
    statsKey(walletId),
    async () => ({ at: -1, generation: -1, text: '', remaking: null }),
    () => 2_000,
  )
  if (held.at !== now || held.generation !== generation) {
    held.remaking ??= (async () => {
      try {
        held.text = JSON.stringify(await s.stats.stats(walletId, now)) // throws for an unknown wallet: the holder stays empty
        held.at = now
        held.generation = generation
      } finally {
        held.remaking = null
      }
    })()
    await held.remaking
  }
  return held.text
}

/** The same text when it is current (the hot-read path answers from it, see routes/hot-reads.ts). */
export function heldWalletStatsJson(s: Services, walletId: string): string | undefined {
  const held = s.cached.peek<StatsHolder>(statsKey(walletId))
  return held && held.at === nowSeconds() && held.generation === s.stats.ranksGeneration() ? held.text : undefined
}

export const walletRoutes = (s: Services) =>
  new Elysia({ prefix: '/v1/wallets', tags: ['Wallets'] })
    .get('/address/:address', async ({ params }) => walletBody(await s.wallets.byAddress(params.address)), {
      response: { 200: Wallet, ...errors(404) },
      detail: { summary: 'Get a wallet by address', description: 'Any letter case.' },
    })
    .get('/:wallet_id', async ({ params }) => walletBody(await s.wallets.byId(params.wallet_id)), {
      response: { 200: Wallet, ...errors(404) },
      detail: { summary: 'Get a wallet' },
    })
    .get('/:wallet_id/stats', async ({ params }) => jsonResponse(await walletStatsJson(s, params.wallet_id)), {
      response: { 200: WalletStats, ...errors(404) },
      detail: {
        summary: 'Wallet statistics',
        description:
          'Public aggregates, refreshed periodically (TRELLIS_STATS_REFRESH_S); ranks are refreshed on ' +
          'their own period (TRELLIS_RANKINGS_REFRESH_S).',
      },
    })
    .use(walletAuth(s.auth))
    .patch('/:wallet_id', async ({ params, body, signer }) => walletBody(await s.wallets.update(signer, params.wallet_id, body ?? {})), {
      wallet: true,
      body: t.Optional(UpdateWallet),
      response: { 200: Wallet, ...errors(403, 404, 409) },
      detail: { summary: 'Update your wallet profile', description: 'A wallet can update only itself.' },
    })
    .get(
      '/:wallet_id/analytics',
      async ({ params, query, signer, request }) => {
        if (wantsCsv(query.format, request.headers.get('accept'))) {
          const { filename, lines } = await s.analytics.csv(signer, params.wallet_id, query)
          return csvAnswer(filename, lines)
        }
        const report = await s.analytics.report(signer, params.wallet_id, query)
        return jsonResponse(JSON.stringify(report), { 'cache-control': 'private, no-store' }) // its wallet's only
      },
      {
        wallet: true,
        query: t.Object(analyticsQuery),
        response: { 200: Analytics, ...errors(403, 404) },
        detail: {
          summary: 'Your analytics (the wallet itself)',
          description:
            "The signing wallet's sales (ledger rows paid to it: its feeds' entries and passes), buyers and 402 " +
            'challenges over a range of whole UTC days (by default the last 30, today included), in buckets of a ' +
            `day, a week (Monday to Sunday) or a calendar month (UTC), at most ${MAX_SERIES_POINTS} of them (400 ` +
            'INVALID_PARAMETER past that, or for an empty range). Money in USDC smallest units as decimal strings. ' +
            'challenges counts the 402 answers served for its entries and passes (counted within seconds). With ' +
            'Accept: text/csv or format=csv: its sales in the range instead, streamed, one CSV row each, oldest first ' +
            `(columns ${ANALYTICS_CSV_COLUMNS.join(', ')}: time in ISO 8601 UTC, entry_id empty for a pass). 403 ` +
            'UNAUTHORIZED for another wallet.',
          'x-also-as': { type: 'text/csv', description: 'format=csv or Accept: text/csv: one line per sale, after a header line' },
        },
      },
    )
