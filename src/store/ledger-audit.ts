// The ledger's own consistency, in SQL: totals and tallies equal sums of the ledger, every settled payment has exactly one
// ledger row and every ledger row a settled payment and an entitlement. And the rows to check against the chain.
import { q, type Sql } from './query.ts'

export interface LedgerRowToProve {
  id: string
  transaction_hash: string
  payer_lc: string
  pay_to_lc: string
  amount: string
  nonce: string | null
  /** The network the sale was settled on. */
  network: string | null
}

export interface FailedSubmission {
  id: string
  payer_lc: string
  nonce: string
  pay_to: string
  amount: string
  submitted_block: number
  network: string | null
}

const INCONSISTENCIES: [string, string][] = [
  [
    'entry totals differ from the ledger',
    `
    SELECT e.id AS subject FROM entries e
    LEFT JOIN (SELECT entry_id, COUNT(*) AS n, SUM(amount) AS total FROM transactions GROUP BY entry_id) t ON
      t.entry_id = e.id
    WHERE e.total_purchases != COALESCE(t.n, 0) OR e.total_revenue != COALESCE(t.total, 0)`,
  ],
  [
    'feed totals differ from the ledger',
    `
    SELECT f.id AS subject FROM feeds f
    LEFT JOIN (SELECT feed_id, COUNT(*) AS n, SUM(amount) AS total FROM transactions GROUP BY feed_id) s
      ON s.feed_id = f.id
    WHERE f.total_purchases != COALESCE(s.n, 0) OR f.total_revenue != COALESCE(s.total, 0)`,
  ],
  [
    "feed entry counts differ from the feed's active entries",
    `
    SELECT f.id AS subject FROM feeds f
    WHERE f.total_entries != (SELECT COUNT(*) FROM entries e WHERE e.feed_id = f.id AND e.is_active = 1)`,
  ],
  [
    'ledger row whose feed or kind disagrees with what it sold',
    `
    SELECT t.id AS subject FROM transactions t LEFT JOIN entries e ON e.id = t.entry_id
    WHERE (t.kind = 'entry' AND e.id IS NOT NULL AND (t.feed_id IS NULL OR t.feed_id != e.feed_id))
      OR (t.kind = 'pass' AND (t.entry_id IS NOT NULL OR t.feed_id IS NULL))`,
  ],
  [
    'ledger totals differ from the ledger',
    `
    SELECT 'ledger_totals' AS subject FROM ledger_totals
    WHERE (transactions, revenue) != (SELECT COUNT(*), COALESCE(SUM(amount), 0) FROM transactions)`,
  ],
  [
    'daily feed tallies differ from the ledger',
    `
    SELECT DISTINCT feed_id || '@' || day AS subject FROM (
      SELECT * FROM (SELECT feed_id, day, purchases, revenue FROM feed_days
        EXCEPT SELECT feed_id, created_at / 86400, COUNT(*), SUM(amount) FROM transactions
          WHERE feed_id IS NOT NULL GROUP BY 1, 2) AS part1
      UNION ALL SELECT * FROM (SELECT feed_id, created_at / 86400, COUNT(*), SUM(amount) FROM
        transactions WHERE feed_id IS NOT NULL GROUP BY 1, 2
        EXCEPT SELECT feed_id, day, purchases, revenue FROM feed_days) AS last_part) AS differences`,
  ],
  [
    'daily buyer tallies differ from the ledger',
    `
    SELECT DISTINCT payer_lc || '@' || day AS subject FROM (
      SELECT * FROM (SELECT payer_lc, day, purchases, spent FROM buyer_days
        EXCEPT SELECT payer_lc, created_at / 86400, COUNT(*), SUM(amount) FROM transactions GROUP BY 1, 2) AS part2
      UNION ALL SELECT * FROM (SELECT payer_lc, created_at / 86400, COUNT(*), SUM(amount) FROM transactions
        GROUP BY 1, 2
        EXCEPT SELECT payer_lc, day, purchases, spent FROM buyer_days) AS last_part) AS differences`,
  ],
  [
    'daily seller tallies differ from the ledger',
    `
    SELECT DISTINCT pay_to_lc || '@' || day AS subject FROM (
      SELECT * FROM (SELECT pay_to_lc, day, payer_lc, purchases, revenue, passes FROM seller_buyer_days
        EXCEPT SELECT pay_to_lc, created_at / 86400, payer_lc, COUNT(*), SUM(amount), SUM(CASE WHEN kind = 'pass' THEN 1 ELSE 0 END)
          FROM transactions GROUP BY 1, 2, 3) AS seller_part
      UNION ALL SELECT * FROM (SELECT pay_to_lc, created_at / 86400, payer_lc, COUNT(*), SUM(amount),
          SUM(CASE WHEN kind = 'pass' THEN 1 ELSE 0 END) FROM transactions GROUP BY 1, 2, 3
        EXCEPT SELECT pay_to_lc, day, payer_lc, purchases, revenue, passes FROM seller_buyer_days) AS last_part) AS differences`,
  ],
  [
    'daily entry tallies differ from the ledger',
    `
    SELECT DISTINCT entry_id || '@' || day AS subject FROM (
      SELECT * FROM (SELECT entry_id, day, purchases, revenue FROM entry_days
        EXCEPT SELECT entry_id, created_at / 86400, COUNT(*), SUM(amount) FROM transactions
          WHERE entry_id IS NOT NULL GROUP BY 1, 2) AS entry_part
      UNION ALL SELECT * FROM (SELECT entry_id, created_at / 86400, COUNT(*), SUM(amount) FROM transactions
        WHERE entry_id IS NOT NULL GROUP BY 1, 2
        EXCEPT SELECT entry_id, day, purchases, revenue FROM entry_days) AS last_part) AS differences`,
  ],
  [
    'buyer lists differ from the ledger',
    `
    SELECT DISTINCT feed_id || '/' || payer_lc AS subject FROM (
      SELECT * FROM (SELECT feed_id, payer_lc, last_at FROM feed_buyers
        EXCEPT SELECT feed_id, payer_lc, MAX(created_at) FROM transactions WHERE feed_id IS NOT NULL
          GROUP BY 1, 2) AS part3
      UNION ALL SELECT * FROM (SELECT feed_id, payer_lc, MAX(created_at) FROM transactions
        WHERE feed_id IS NOT NULL GROUP BY 1, 2
        EXCEPT SELECT feed_id, payer_lc, last_at FROM feed_buyers) AS part4
      UNION ALL SELECT * FROM (SELECT entry_id, payer_lc, last_at FROM entry_buyers
        EXCEPT SELECT entry_id, payer_lc, MAX(created_at) FROM transactions WHERE entry_id IS NOT NULL GROUP
          BY 1, 2) AS part5
      UNION ALL SELECT * FROM (SELECT entry_id, payer_lc, MAX(created_at) FROM transactions WHERE entry_id IS
        NOT NULL GROUP BY 1, 2
        EXCEPT SELECT entry_id, payer_lc, last_at FROM entry_buyers) AS last_part) AS differences`,
  ],
  [
    'address tallies differ from the ledger',
    `
    SELECT a.address_lc AS subject FROM address_totals a
    LEFT JOIN (SELECT pay_to_lc, COUNT(*) AS n, SUM(amount) AS total, COUNT(DISTINCT payer_lc) AS other FROM
      transactions GROUP BY 1) s ON s.pay_to_lc = a.address_lc
    LEFT JOIN (SELECT payer_lc, COUNT(*) AS n, SUM(amount) AS total, COUNT(DISTINCT pay_to_lc) AS other FROM
      transactions GROUP BY 1) b ON b.payer_lc = a.address_lc
    WHERE (a.sold, a.revenue, a.buyers, a.bought, a.spent, a.sellers) != (COALESCE(s.n, 0), COALESCE(s.total,
      0), COALESCE(s.other, 0), COALESCE(b.n, 0), COALESCE(b.total, 0), COALESCE(b.other, 0))
      OR a.feeds_bought_from != (SELECT COUNT(*) FROM feed_buyers f WHERE f.payer_lc = a.address_lc)
      OR a.entries_bought != (SELECT COUNT(*) FROM entry_buyers e WHERE e.payer_lc = a.address_lc)
    UNION ALL SELECT t.payer_lc FROM transactions t LEFT JOIN address_totals a ON a.address_lc = t.payer_lc
      WHERE a.address_lc IS NULL
    UNION ALL SELECT t.pay_to_lc FROM transactions t LEFT JOIN address_totals a ON a.address_lc = t.pay_to_lc
      WHERE a.address_lc IS NULL`,
  ],
  [
    'settled payment without exactly one matching ledger row',
    `
    SELECT p.id AS subject FROM payments p
    WHERE p.status = 'settled' AND (SELECT COUNT(*) FROM transactions t
      WHERE t.piid = p.id AND t.transaction_hash = p.transaction_hash AND t.network = p.network AND t.amount = p.amount
        AND t.payer_lc
        = p.payer_lc
        AND t.pay_to_lc = LOWER(p.pay_to) AND (t.entry_id = p.entry_id
          OR (t.kind = 'pass' AND t.entry_id IS NULL AND t.feed_id = p.pass_feed_id))) != 1`,
  ],
  [
    'ledger row without a settled payment',
    `
    SELECT t.id AS subject FROM transactions t LEFT JOIN payments p ON p.id = t.piid
    WHERE p.id IS NULL OR p.status != 'settled'`,
  ],
  [
    "ledger row without the buyer's entitlement",
    `
    SELECT t.id AS subject FROM transactions t
    WHERE t.kind = 'entry' AND NOT EXISTS (SELECT 1 FROM wallets w JOIN purchases u ON u.wallet_id = w.id WHERE
      w.address_lc = t.payer_lc AND u.entry_id = t.entry_id)
    UNION ALL SELECT t.id FROM transactions t
    WHERE t.kind = 'pass' AND NOT EXISTS (SELECT 1 FROM passes h WHERE h.transaction_id = t.id AND h.holder_lc =
      t.payer_lc AND h.feed_id = t.feed_id)`,
  ],
]

export type Inconsistency = { problem: string; subjects: string[] }

export interface LedgerAuditStore {
  /** Each broken rule with up to 20 of the ids that break it. Reads the whole ledger: run it in a snapshot, off the event loop. */
  inconsistencies(): Promise<Inconsistency[]>
  ledgerRowsAfter(id: string, limit: number): Promise<LedgerRowToProve[]>
  lastLedgerId(): Promise<string>
  failedSubmissionsSince(seconds: number): Promise<FailedSubmission[]>
  pending(): Promise<{ n: number; oldest: number | null }>
  totals(): Promise<{ transactions: number; revenue: string }>
}

export function ledgerAuditStore(sql: Sql): LedgerAuditStore {
  return {
    async inconsistencies() {
      const found: Inconsistency[] = []
      for (const [problem, rule] of INCONSISTENCIES) {
        // Under LIMIT PostgreSQL plans for the first rows, expecting differences; a rule must keep a plan that is fast
        // when there are none (as NOT EXISTS, not LEFT JOIN … IS NULL, which takes minutes over a large ledger).
        const subjects = (await sql.all<{ subject: string }>(q([`${rule} LIMIT 20`]))).map((r) => String(r.subject))
        if (subjects.length > 0) found.push({ problem, subjects })
      }
      return found
    },
    ledgerRowsAfter: async (id, limit) =>
      await sql.all<LedgerRowToProve>(q`SELECT t.id, t.transaction_hash,
      t.payer_lc, t.pay_to_lc, CAST(t.amount AS TEXT) AS amount, p.nonce, t.network
      FROM transactions t LEFT JOIN payments p ON p.id = t.piid WHERE t.id > ${id} ORDER BY t.id LIMIT ${limit}`),
    lastLedgerId: async () =>
      (
        await sql.get<{ id: string | null }>(q`SELECT MAX(id) AS id FROM
      transactions`)
      )?.id ?? '',
    failedSubmissionsSince: async (seconds) =>
      (
        await sql.all<FailedSubmission>(q`SELECT id, payer_lc, nonce,
      pay_to, CAST(amount AS TEXT) AS amount, submitted_block, network
      FROM payments WHERE status = 'failed' AND submitted_block IS NOT NULL AND updated_at >= ${seconds} ORDER BY id`)
      ).map((row) => ({ ...row, submitted_block: Number(row.submitted_block) })),
    async pending() {
      const row = (await sql.get<{ n: number; oldest: number | null }>(q`SELECT COUNT(*) AS n,
        MIN(valid_before) AS oldest FROM payments WHERE status = 'pending'`))!
      return { n: Number(row.n), oldest: row.oldest === null ? null : Number(row.oldest) }
    },
    async totals() {
      const row = (await sql.get<{ transactions: number; revenue: string }>(q`SELECT transactions,
        CAST(revenue AS TEXT) AS revenue FROM ledger_totals`))!
      return { transactions: Number(row.transactions), revenue: String(row.revenue) }
    },
  }
}
