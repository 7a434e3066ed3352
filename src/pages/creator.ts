// A creator's page: the profile, the public statistics and the feeds.
import type { WalletRecord } from '../models/records.ts'
import type { WalletStats } from '../models/wallet.ts'
import { html } from './html.ts'
import { page } from './layout.ts'
import { feedCards, figures, type FeedCard } from './cards.ts'
import { count, day, usdc } from './format.ts'
import { creatorName } from './names.ts'

export interface CreatorFacts {
  network: string
  origin: string
  wallet: WalletRecord
  stats: WalletStats
  feeds: FeedCard[]
  assetVersion: string
}

export function creatorPage(f: CreatorFacts): string {
  const { wallet, stats } = f
  const name = creatorName(wallet)
  return page(
    {
      title: name,
      network: f.network,
      assetVersion: f.assetVersion,
      origin: f.origin,
      card: { type: 'profile', path: `/creators/${wallet.address}`, description: `${f.feeds.length} feeds on Trellis` },
    },
    html`
<section class="intro">
  <p class="kicker">Creator</p>
  <h1>${name}</h1>
  <p class="muted"><code>${wallet.address}</code> · on ${wallet.network} · joined ${day(wallet.created_at)}</p>
  ${figures([
    ['feeds', count(stats.content_stats.total_feeds)],
    ['entries', count(stats.content_stats.total_entries)],
    ['paid entries', count(stats.content_stats.paid_entries)],
    ['sales', count(stats.revenue_stats.total_purchases_received)],
    ['buyers', count(stats.revenue_stats.unique_buyers)],
    ['earned', usdc(stats.revenue_stats.total_revenue)],
    ['purchases made', count(stats.purchase_stats.total_purchases_made)],
    // A rank means something only among those with revenue: a wallet that earned nothing is ranked nowhere.
    ...(BigInt(stats.revenue_stats.total_revenue) > 0n ? [['revenue rank', `#${stats.rankings.revenue_rank}`] as [string, string]] : []),
  ])}
</section>
<h2>Feeds</h2>
${f.feeds.length ? feedCards(f.feeds) : html`<p class="empty">No feeds.</p>`}`,
  )
}
