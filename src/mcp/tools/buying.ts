// The agent's purchases: buy_entry and buy_pass (only with the operator's wallet: they pay) and list_purchases (the public ledger
// filtered by payer; offered by `trellis mcp`, which the server's rate limits see, never over /mcp, whose in-process
// calls would pass round the ledger's own limit).
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { usdcDecimal } from '../../lib/money.ts'
import { withQuery } from '../api.ts'
import { showContent } from '../content.ts'
import { buyEntry, buyPass } from '../purchase.ts'
import { address, answer, id, pageSize, pageToken, units, type ToolContext } from './common.ts'
import { entryPath } from './reading.ts'

export function registerBuyingTool(server: McpServer, ctx: ToolContext & { wallet: NonNullable<ToolContext['wallet']> }): void {
  const { api, wallet } = ctx
  const caps =
    `at most ${usdcDecimal(wallet.caps.maxPerCall)} USDC a purchase ` + `and ${usdcDecimal(wallet.caps.maxPerSession)} USDC in this session`
  server.registerTool(
    'buy_entry',
    {
      title: 'Buy an entry',
      description:
        `Pays for a paid entry with the operator's wallet (${wallet.account.address}) over x402, in ` +
        `USDC, and returns its content as get_entry does, with the settlement (transaction hash). The ` +
        `operator allows ${caps}: a purchase over a cap is refused before anything is signed. An entry ` +
        `this wallet owns or already bought, or whose feed it holds a pass to, is read without paying. Check the ` +
        `price first with get_price (which also shows the feed's pass: buy_pass may cost less than several entries); ` +
        `max_price refuses to pay more should it have changed.`,
      inputSchema: {
        feed_id: id('feed id'),
        entry_id: id('entry id'),
        max_price: units('the most to pay for this entry, USDC smallest units (e.g. the amount get_price gave)').optional(),
      },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    },
    async ({ feed_id, entry_id, max_price }) => {
      const bought = await buyEntry(api, wallet, entryPath(feed_id, entry_id), max_price === undefined ? undefined : BigInt(max_price))
      const entry = bought.entry
      const purchase =
        bought.kind === 'paid'
          ? { paid: true, amount: bought.amount.toString(), amount_usdc: usdcDecimal(bought.amount), ...bought.settlement }
          : {
              paid: false,
              reason: entry.is_free
                ? 'the entry is free: nothing was paid'
                : 'this wallet owns the entry, bought it, or holds a pass to its feed: nothing was paid',
            }
      const session = { spent: wallet.caps.spent.toString(), left: wallet.caps.left.toString() }
      if (typeof entry.content_url !== 'string') return answer({ purchase, session, entry, readable: false })
      const shown = await showContent(api, entry.content_url, entry.mime_type, entry.content_url, ctx.inline)
      return answer({ purchase, session, entry, readable: true, content: shown.about }, shown.blocks)
    },
  )

  server.registerTool(
    'buy_pass',
    {
      title: "Buy a feed's pass",
      description:
        `Pays for the feed's pass with the operator's wallet (${wallet.account.address}) over x402, in USDC: ` +
        `while it runs (until expires_at), get_entry and buy_entry read every paid entry of the feed, those ` +
        `published later too, without paying. Buying again while a pass runs adds its duration from the end. The ` +
        `operator allows ${caps}, the same caps as buy_entry: a pass over a cap is refused before anything is ` +
        `signed. See the pass's price and duration with get_price or search_feeds; max_price refuses to pay more ` +
        `should it have changed. Returns the pass (holder, starts_at, expires_at: Unix seconds) and the settlement.`,
      inputSchema: {
        feed_id: id('feed id'),
        max_price: units('the most to pay for the pass, USDC smallest units (e.g. the amount get_price gave)').optional(),
      },
      // Not idempotent: each call that pays buys more time.
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    async ({ feed_id, max_price }) => {
      const bought = await buyPass(api, wallet, feed_id, max_price === undefined ? undefined : BigInt(max_price))
      const pass = bought.body
      return answer({
        purchase: { paid: true, amount: bought.amount.toString(), amount_usdc: usdcDecimal(bought.amount), ...bought.settlement },
        session: { spent: wallet.caps.spent.toString(), left: wallet.caps.left.toString() },
        pass: { ...pass, expires_at_iso: typeof pass.expires_at === 'number' ? new Date(pass.expires_at * 1000).toISOString() : null },
      })
    },
  )
}

export function registerPurchasesTool(server: McpServer, ctx: ToolContext): void {
  const { api, wallet } = ctx
  const payer = address(wallet ? `the buyer's address (default: this wallet, ${wallet.account.address})` : "the buyer's address")
  server.registerTool(
    'list_purchases',
    {
      title: 'List purchases',
      description:
        `What a wallet bought on this marketplace, newest first, from the public ledger: each ` +
        `purchase's entry_id, amount (USDC smallest units), the address paid, the on-chain transaction ` +
        `hash and time.${wallet ? " Without wallet_address, this agent's own wallet." : ''}`,
      inputSchema: { wallet_address: wallet ? payer.optional() : payer, page_size: pageSize, page_token: pageToken },
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    async (input: { wallet_address?: string; page_size?: number; page_token?: string }) => {
      const buyer = input.wallet_address ?? wallet?.account.address
      if (!buyer) throw new Error('wallet_address is required')
      const body = await api.json(withQuery('/v1/transactions', { payer: buyer, page_size: input.page_size, page_token: input.page_token }))
      const purchases = (body.transactions ?? []).map((row: { amount: string }) => ({ ...row, amount_usdc: usdcDecimal(row.amount) }))
      return answer({
        wallet_address: buyer,
        purchases,
        total_count: body.pagination?.total_count ?? purchases.length,
        next_page_token: body.pagination?.next_page_token ?? null,
        has_more: body.pagination?.has_more ?? false,
      })
    },
  )
}
