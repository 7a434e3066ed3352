// The operator's spending caps: the safety of handing an agent a wallet. A purchase holds its amount (the amount of
// the requirement about to be signed) before anything is signed; the hold is refused when that one amount is over the
// per-call cap, or when what this process spent, plus what other purchases in progress hold, plus this amount, would
// be over the per-session cap. Holding (not only checking) keeps two purchases in flight at once from both fitting
// under the cap that only one fits under. Money is bigint, in USDC smallest units, throughout.
import { usdcDecimal } from '../lib/money.ts'
import { MCP_VARIABLES } from '../config/mcp.ts'

/** One purchase's hold on the budget: spent (the money left, or may have), or released (nothing was charged). */
export interface Hold {
  readonly amount: bigint
  /** Counts the amount as spent in this session. */
  spend(): void
  /** Gives the amount back: the payment was refused, or never sent. */
  release(): void
}

export type Holding = { ok: true; hold: Hold } | { ok: false; reason: string }

const usdc = (amount: bigint) => `${amount} (${usdcDecimal(amount)} USDC)`

export class SpendingCaps {
  #spent = 0n
  #held = 0n

  constructor(readonly maxPerCall: bigint, readonly maxPerSession: bigint) {}

  /** Spent in this session: payments the server settled, and those whose outcome could not be known. */
  get spent(): bigint {
    return this.#spent
  }

  /** What may still be spent in this session (purchases in progress hold part of it). */
  get left(): bigint {
    const left = this.maxPerSession - this.#spent - this.#held
    return left > 0n ? left : 0n
  }

  hold(amount: bigint): Holding {
    if (amount < 0n) return { ok: false, reason: `refused: the amount ${amount} is negative; nothing was signed` }
    if (amount > this.maxPerCall) {
      return { ok: false, reason: `refused: this purchase costs ${usdc(amount)}, over the per-call cap of ${usdc(this.maxPerCall)} set by ${MCP_VARIABLES.maxPerCall}; nothing was signed` }
    }
    if (this.#spent + this.#held + amount > this.maxPerSession) {
      const inFlight = this.#held > 0n ? `, and ${usdc(this.#held)} held by purchases in progress` : ''
      return {
        ok: false,
        reason: `refused: this purchase costs ${usdc(amount)}; with ${usdc(this.#spent)} already spent in this session${inFlight}, it would exceed the per-session cap of ${usdc(this.maxPerSession)} set by ${MCP_VARIABLES.maxPerSession}; nothing was signed`,
      }
    }
    this.#held += amount
    let open = true
    const close = (spent: boolean) => {
      if (!open) return // a hold ends once: a second call changes nothing
      open = false
      this.#held -= amount
      if (spent) this.#spent += amount
    }
    return { ok: true, hold: { amount, spend: () => close(true), release: () => close(false) } }
  }
}
