// What a purchase needs from the rest of the server; purchases.ts is handed it, and hands it to its parts.
import type { Records } from '../../store/stores.ts'
import type { PaymentEngines } from '../../chain/x402/engines.ts'

export interface PurchaseDeps {
  records: Records
  /** One per network sold on. */
  engines: PaymentEngines
  log: (msg: string, fields?: Record<string, unknown>) => void
  /** Info-level lines: every settled payment is one (an operator's trail from sale to transaction). */
  logInfo?: (msg: string, fields?: Record<string, unknown>) => void
  /** Fault injection for tests: called between a successful settlement and its recording. */
  afterSettle?: () => void
  /** Test hook: runs between a payment's ownership check and its pending row (a race with another instance). */
  beforePending?: () => Promise<void>
  /** How long a request waits for another instance's settlement before it answers 503 pending (TRELLIS_CONFIRM_TIMEOUT_S). */
  waitS?: number
}
