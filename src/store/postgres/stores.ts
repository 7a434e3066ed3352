// The stores on PostgreSQL: the shared ones, but where concurrent writers on many connections need what one writer
// at a time does not: rows held with FOR UPDATE, and an entry's slot taken and its row inserted in one statement.
import { q, type Sql } from '../query.ts'
import { sharedStores, type Stores } from '../stores.ts'
import { FEED_SELECT, feedRecord, type FeedRow } from '../feeds.ts'
import { ENTRY_COLUMNS, ENTRY_SELECT, entryRecord, NEW_ENTRY_COLUMNS, newEntryValues, noSlot, takeSlot, type EntryRow } from '../entries.ts'

export function postgresStores(sql: Sql): Stores {
  const shared = sharedStores(sql)
  return {
    ...shared,
    feeds: {
      ...shared.feeds,
      async held(id) {
        const row = await sql.get<FeedRow>(q`${FEED_SELECT} WHERE f.id = ${id} FOR UPDATE OF f`)
        return row ? feedRecord(row) : undefined
      },
      // NO KEY: an owner's feed creations queue on it, while a purchase's reference to the wallet (FOR KEY SHARE)
      // passes; FOR UPDATE would make those two a deadlock when the purchase holds the address rows first.
      async lockOwner(walletId) {
        await sql.get(q`SELECT id FROM wallets WHERE id = ${walletId} FOR NO KEY UPDATE`)
      },
    },
    entries: {
      ...shared.entries,
      async held(id) {
        const row = await sql.get<EntryRow>(q`${ENTRY_SELECT} WHERE e.id = ${id} FOR UPDATE`)
        return row ? entryRecord(row) : undefined
      },
      // The slot is a CTE: no row from it, no insert, and the statement commits nothing.
      async add(e, max) {
        const row = await sql.get<EntryRow>(q`WITH slot AS (${takeSlot(e.feed_id, max)} RETURNING id)
          INSERT INTO entries AS e ${NEW_ENTRY_COLUMNS} SELECT ${newEntryValues(e)} FROM slot RETURNING ${ENTRY_COLUMNS}`)
        return row ? entryRecord(row) : noSlot(sql, e.feed_id)
      },
    },
  }
}
