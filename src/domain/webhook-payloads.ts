// What a webhook delivery says: `{type, timestamp, data}` as Standard Webhooks suggests (models/webhook.ts:
// WebhookPayload), built from the records at the first attempt and kept, so every attempt signs the same bytes.
import type { Records } from '../store/stores.ts'
import type { WebhookDeliveryRecord } from '../models/records.ts'
import type { WebhookPayload } from '../models/webhook.ts'
import { checksumAddress } from '../chain/signatures.ts'

/** The ledger row's fields every sale event carries, whatever it sold. */
async function saleOf(records: Records, transactionId: string) {
  const sale = (await records.read.transactions.byId(transactionId))!
  return {
    sale,
    fields: {
      transaction_id: `tx_${sale.id}`,
      transaction_hash: sale.transaction_hash,
      network: sale.network,
      asset: sale.asset,
      amount: sale.amount.toString(),
      payer: sale.payer,
      pay_to: sale.pay_to,
    },
  }
}

async function dataOf(records: Records, delivery: WebhookDeliveryRecord): Promise<WebhookPayload['data']> {
  const read = records.read
  switch (delivery.event) {
    case 'sale.recorded': {
      const { sale, fields } = await saleOf(records, delivery.subject_id)
      const entry = sale.entry_id ? await read.entries.byId(sale.entry_id) : undefined
      return {
        ...fields,
        entry_id: sale.entry_id,
        feed_id: entry?.feed_id ?? null,
        entry_title: entry?.title ?? null,
        created_at: sale.created_at,
      }
    }
    case 'entry.expired': {
      const entry = (await read.entries.byId(delivery.subject_id))!
      return {
        entry_id: entry.id,
        feed_id: entry.feed_id,
        entry_title: entry.title,
        price: entry.price.toString(),
        expires_at: entry.expires_at,
      }
    }
    case 'entry.published': {
      const entry = (await read.entries.byId(delivery.subject_id))!
      const feed = (await read.feeds.byId(entry.feed_id))!
      return {
        entry_id: entry.id,
        feed_id: entry.feed_id,
        feed_name: feed.name,
        entry_title: entry.title,
        description: entry.description,
        mime_type: entry.mime_type,
        tags: entry.tags,
        is_free: entry.is_free,
        price: entry.price.toString(),
        expires_at: entry.expires_at,
        created_at: entry.created_at,
      }
    }
    default: {
      const pass = (await read.passes.byId(delivery.subject_id))!
      const feed = (await read.feeds.byId(pass.feed_id))!
      const held = {
        feed_id: pass.feed_id,
        feed_name: feed.name,
        pass_id: pass.id,
        holder: checksumAddress(pass.holder_lc),
        starts_at: pass.starts_at,
        expires_at: pass.expires_at,
      }
      if (delivery.event === 'pass.expired') return held
      const { sale, fields } = await saleOf(records, pass.transaction_id)
      return { ...fields, ...held, created_at: sale.created_at }
    }
  }
}

export async function payloadOf(records: Records, delivery: WebhookDeliveryRecord): Promise<string> {
  const timestamp = new Date(delivery.created_at * 1000).toISOString()
  const data = await dataOf(records, delivery)
  return JSON.stringify({ type: delivery.event, timestamp, data })
}
