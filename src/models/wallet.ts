import { Type as t, type Static } from '@sinclair/typebox'
import { Money, Nullable, UnixSeconds } from './common.ts'

export const Wallet = t.Object(
  {
    id: t.String({ description: 'UUID' }),
    address: t.String({ description: 'EIP-55 checksum form' }),
    wallet_address: t.String({ description: 'the same as address (the SDK reads this name)' }),
    network: t.String(),
    wallet_address_network: t.String({ description: 'the same as network' }),
    username: Nullable(t.String()),
    picture_url: Nullable(t.String()),
    total_feeds: t.Integer({ description: 'active feeds' }),
    total_entries: t.Integer({ description: 'active entries of active feeds' }),
    total_revenue: Money(),
    created_at: UnixSeconds(),
    updated_at: UnixSeconds(),
  },
  { description: 'A wallet profile' },
)
export type Wallet = Static<typeof Wallet>

// Checked by hand after authorization, so a stranger learns nothing about a bad body before the 403.
export const UpdateWallet = t.Object({
  username: t.Optional(t.Unknown({ description: '3-50 characters a-z, A-Z, 0-9; unique; null clears' })),
  picture_url: t.Optional(t.Unknown({ description: 'http(s) URL; null clears' })),
})

const Count = t.Integer()
export const WalletStats = t.Object(
  {
    wallet_id: t.String(),
    address: t.String(),
    network: t.String(),
    generated_at: UnixSeconds(),
    content_stats: t.Object({
      total_feeds: Count,
      total_entries: Count,
      free_entries: Count,
      paid_entries: Count,
      total_content_size: t.Integer({ description: 'bytes' }),
    }),
    revenue_stats: t.Object({
      total_revenue: Money(),
      revenue_usdc: t.String({ description: 'in USDC, decimal' }),
      unique_buyers: Count,
      total_purchases_received: Count,
      average_entry_price: Money(),
    }),
    purchase_stats: t.Object({
      total_spent: Money(),
      spent_usdc: t.String({ description: 'in USDC, decimal' }),
      unique_sellers: Count,
      total_purchases_made: Count,
      average_purchase_amount: Money(),
    }),
    rankings: t.Object(
      { revenue_rank: Count, content_rank: Count, buyer_rank: Count },
      { description: '1 = highest; refreshed every TRELLIS_RANKINGS_REFRESH_S' },
    ),
    activity: t.Object({ first_activity: UnixSeconds(), last_activity: UnixSeconds(), active_days: Count }),
    // The SDK's flat names, side by side.
    total_feeds_created: Count,
    total_entries_published: Count,
    total_revenue_earned: Money(),
    total_items_sold: Count,
    unique_buyers_count: Count,
    total_purchases_made: Count,
    total_amount_spent: Money(),
    unique_feeds_purchased_from: Count,
    revenue_rank: Count,
    purchases_rank: Count,
    last_calculated_at: UnixSeconds(),
    created_at: UnixSeconds(),
    updated_at: UnixSeconds(),
  },
  { description: "A wallet's public statistics: the seed's groups and the SDK's flat fields" },
)
export type WalletStats = Static<typeof WalletStats>
