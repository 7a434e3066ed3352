// /v1/wallets: wallet profiles by id or address.
import { Elysia, t } from 'elysia'
import { UpdateWallet, Wallet, WalletStats } from '../models/index.ts'
import { errors } from '../edge/openapi.ts'
import type { WalletRecord } from '../models/records.ts'
import type { Services } from './services.ts'
import { walletAuth } from './wallet-auth.ts'
import { jsonResponse } from '../edge/json-response.ts'
import { nowSeconds } from '../lib/clock.ts'

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
