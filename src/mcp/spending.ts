// The operator's spending caps: the safety of handing an agent a wallet. A purchase holds its amount (the amount of
// the requirement about to be signed) before anything is signed; the hold is refused when that one amount is over the
// per-call cap, or when what this process spent, plus what other purchases in progress hold, plus this amount, would
// be over the per-session cap. Holding (not only checking) keeps two purchases in flight at once from both fitting
// under the cap that only one fits under. Money is bigint, in USDC smallest units, throughout.
//
// A signed EIP-3009 authorization that left this process can be settled by whoever holds it until its validBefore,
// whatever the server answered: so it stays spent unless it was settled (spent for good) or the chain shows it unused
// once it can no longer be (then, and only then, its amount is given back).
import { usdcDecimal } from '../lib/money.ts'
import { MCP_VARIABLES } from '../config/mcp.ts'
import type { NetworkName } from '../config/networks.ts'

/** A signed authorization that was sent: what the chain is asked about. */
export interface SentAuthorization {
  network: NetworkName
  asset: `0x${string}`
  from: `0x${string}`
  nonce: `0x${string}`
  /** Unix seconds: from then on the chain refuses it. */
  validBefore: bigint
}

/** What the chain says of a sent authorization: used, unused after it expired (it never can be), or not yet known. */
export type AuthorizationFate = 'used' | 'expired-unused' | 'unknown'
export type AuthorizationCheck = (sent: SentAuthorization) => Promise<AuthorizationFate>

/** One purchase's hold on the budget. */
export interface Hold {
  readonly amount: bigint
  /** Settled: spent in this session for good. */
  spend(): void
  /** Sent, and not (known to be) settled: spent until the chain shows it expired unused. */
  sent(authorization: SentAuthorization): void
  /** Never sent: given back. */
  release(): void
}

export type Holding = { ok: true; hold: Hold } | { ok: false; reason: string }

const usdc = (amount: bigint) => `${amount} (${usdcDecimal(amount)} USDC)`

export class SpendingCaps {
  #spent = 0n
  #held = 0n
  readonly #outstanding = new Set<{ amount: bigint; authorization: SentAuthorization }>()

  constructor(
    readonly maxPerCall: bigint,
    readonly maxPerSession: bigint,
  ) {}

  /** Spent in this session: payments settled, and authorizations sent whose outcome the chain has not shown. */
  get spent(): bigint {
    return this.#spent
  }

  /** What may still be spent in this session (purchases in progress hold part of it). */
  get left(): bigint {
    const left = this.maxPerSession - this.#spent - this.#held
    return left > 0n ? left : 0n
  }

  /** Authorizations sent but not known to be settled, counted as spent. */
  get outstanding(): number {
    return this.#outstanding.size
  }

  /**
   * Asks the chain about every outstanding authorization whose validBefore has passed by this clock: one used is
   * spent for good (no longer asked about), one the chain shows expired unused gives its amount back.
   */
  async reclaim(check: AuthorizationCheck, nowSeconds = BigInt(Math.floor(Date.now() / 1000))): Promise<void> {
    const due = [...this.#outstanding].filter((one) => one.authorization.validBefore <= nowSeconds)
    await Promise.all(
      due.map(async (one) => {
        const fate = await check(one.authorization).catch((): AuthorizationFate => 'unknown')
        if (fate === 'unknown' || !this.#outstanding.delete(one)) return
        if (fate === 'expired-unused') this.#spent -= one.amount
      }),
    )
  }

  hold(amount: bigint): Holding {
    if (amount < 0n) return { ok: false, reason: `refused: the amount ${amount} is negative; nothing was signed` }
    if (amount > this.maxPerCall) {
      return {
        ok: false,
        reason:
          `refused: this purchase costs ${usdc(amount)}, over the per-call cap ` +
          `of ${usdc(this.maxPerCall)} set by ${MCP_VARIABLES.maxPerCall}; nothing was signed`,
      }
    }
    if (this.#spent + this.#held + amount > this.maxPerSession) {
      const inFlight = this.#held > 0n ? `, and ${usdc(this.#held)} held by purchases in progress` : ''
      const unsettled =
        this.#outstanding.size > 0
          ? ` (${this.#outstanding.size} of them sent and not settled, counted until the chain shows them expired unused)`
          : ''
      return {
        ok: false,
        reason:
          `refused: this purchase costs ${usdc(amount)}; with ${usdc(this.#spent)} already spent in this ` +
          `session${unsettled}${inFlight}, it would exceed the per-session cap ` +
          `of ${usdc(this.maxPerSession)} set by ${MCP_VARIABLES.maxPerSession}; nothing was signed`,
      }
    }
    this.#held += amount
    let open = true
    const close = (spent: boolean) => {
      if (!open) return false // a hold ends once: a second call changes nothing
      open = false
      this.#held -= amount
      if (spent) this.#spent += amount
      return true
    }
    return {
      ok: true,
      hold: {
        amount,
        spend: () => void close(true),
        sent: (authorization) => {
          if (close(true)) this.#outstanding.add({ amount, authorization })
        },
        release: () => void close(false),
      },
    }
  }
}
