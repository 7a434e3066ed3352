// The stores on PostgreSQL: the shared ones, but where concurrent writers on many connections need what one writer
// at a time does not: rows held with FOR UPDATE, and an entry's slot taken and its row inserted in one statement.
//
// That statement holds its feed's row until it commits, and a commit waits for its WAL flush: entries added to one
// feed at once would each wait for the flush of the one before (a hot row, about 6 ms each on this disk). Alone (as
// Records.single runs it), it commits without waiting for the flush, which lets the row go at once, and then waits
// for the flush itself: a statement that writes a WAL record of its own in its own transaction (a transactional
// logical message, which needs no privilege and no row) and so commits fully, waiting for the WAL up to its commit
// record, which comes after the insert's. (A transaction that only takes an id writes nothing before its commit
// record, and PostgreSQL commits that one without waiting: postgres-faults.test.ts lost an entry to a crash.) The
// caller is answered only once the entry is durable; meanwhile others may see it (a crash in those milliseconds loses
// an entry no one was told was stored).
import { q, type Sql } from '../query.ts'
import { sharedStores, type Stores } from '../stores.ts'
import { FEED_SELECT, feedRecord, type FeedRow } from '../feeds.ts'
import { postgresSearchStore } from './search.ts'
import { DOC_COLUMNS, docValues, entryDoc } from '../search.ts'
import { ENTRY_COLUMNS, ENTRY_SELECT, entryRecord, NEW_ENTRY_COLUMNS, newEntryValues, noSlot, takeSlot, type EntryRow } from '../entries.ts'

/** Waits until every commit before it is durable (see above). */
const FLUSHED = q`SELECT pg_logical_emit_message(true, 'trellis', 'flushed') AS flushed`

/** `alone`: each statement commits by itself (a pool); else the stores of one transaction, which commits fully. */
export function postgresStores(sql: Sql, alone = false): Stores {
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
        const lazily = alone ? q`, lazily AS (SELECT set_config('synchronous_commit', 'off', true))` : q``
        // Its search document is written by the same statement, from the entry's row: none when no slot.
        const row = await sql.get<EntryRow>(q`WITH slot AS (${takeSlot(e.feed_id, max)} RETURNING id)${lazily},
          e AS (INSERT INTO entries ${NEW_ENTRY_COLUMNS} SELECT ${newEntryValues(e)} FROM slot${alone ? q`, lazily` : q``} RETURNING *),
          doc AS (INSERT INTO search_docs ${DOC_COLUMNS} SELECT ${docValues(entryDoc(e))} FROM e)
          SELECT ${ENTRY_COLUMNS} FROM e`)
        if (!row) return noSlot(sql, e.feed_id)
        if (alone) await sql.get(FLUSHED)
        return entryRecord(row)
      },
    },
    search: postgresSearchStore(sql),
  }
}
