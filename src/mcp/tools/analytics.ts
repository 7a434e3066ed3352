// get_analytics: the operator's own analytics (GET /v1/wallets/{id}/analytics, signed by its wallet here): sales,
// buyers and 402 challenges over a range, with decimal USDC beside each amount. The range's words and bounds are the
// API's model (models/analytics.ts).
import { z } from 'zod'
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { usdcDecimal } from '../../lib/money.ts'
import { ApiError, segment, withQuery } from '../api.ts'
import type { OperatorWallet } from '../wallet.ts'
import { answer, type ToolContext } from './common.ts'
import { ANALYTICS_INTERVALS, analyticsQuery, DEFAULT_ANALYTICS_DAYS, MAX_SERIES_POINTS } from '../../models/analytics.ts'

/** At most 11 digits, as the API's pattern says. */
const time = (description: string) => z.number().int().min(0).max(99_999_999_999).optional().describe(description)
const withUsdc = <T extends { revenue: string }>(item: T) => ({ ...item, revenue_usdc: usdcDecimal(item.revenue) })

export function registerAnalyticsTool(server: McpServer, ctx: ToolContext & { wallet: OperatorWallet }): void {
  const { api, wallet } = ctx
  server.registerTool(
    'get_analytics',
    {
      title: 'Your sales analytics',
      description:
        `The sales of the operator's wallet (${wallet.account.address}) as a creator, over whole UTC days (by default ` +
        `the last ${DEFAULT_ANALYTICS_DAYS}, today included): revenue (USDC smallest units, and revenue_usdc in ` +
        'decimal), sales of entries and of passes, distinct and repeat buyers, the 402 challenges its entries and ' +
        `passes answered; a series by day, week (from Monday) or month, at most ${MAX_SERIES_POINTS} points; and its ` +
        'top entries and feeds. Only this wallet can read them.',
      inputSchema: {
        from: time(analyticsQuery.from.description ?? 'Unix seconds'),
        to: time(analyticsQuery.to.description ?? 'Unix seconds'),
        interval: z
          .enum(ANALYTICS_INTERVALS)
          .optional()
          .describe(analyticsQuery.interval.description ?? 'the buckets'),
      },
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    async ({ from, to, interval }) => {
      const address = segment(wallet.account.address)
      const found = await api.json<{ id: string }>(`/v1/wallets/address/${address}`).catch((error: unknown) => {
        if (error instanceof ApiError && error.status === 404)
          throw new Error(`the operator's wallet ${wallet.account.address} has published and sold nothing here yet: no analytics`)
        throw error
      })
      const path = withQuery(`/v1/wallets/${segment(found.id)}/analytics`, { from, to, interval })
      const report = await api.json(path, { headers: await wallet.signIn() })
      return answer({
        analytics: {
          ...report,
          series: report.series.map(withUsdc),
          top_entries: report.top_entries.map(withUsdc),
          top_feeds: report.top_feeds.map(withUsdc),
        },
      })
    },
  )
}
