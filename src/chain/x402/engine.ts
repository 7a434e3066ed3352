// Verifying and settling x402 'exact' payments (v1 and v2) with @x402/core's facilitator and @x402/evm's exact EVM
// scheme: in process with our relayer wallet (`local`), or over HTTP at a facilitator (`facilitator`).
// Every answer says whether the payer was refused or the backend (RPC node, facilitator) failed; a settlement is
// only a claim here: the caller proves it on chain (chain/reader.ts) before it counts.
import { createClient, keccak256, publicActions, walletActions, type Address, type Client, type Hex } from 'viem'
import { getTransactionCount, sendRawTransaction } from 'viem/actions'
import { privateKeyToAccount } from 'viem/accounts'
import type { NonceManager } from 'viem/nonce'
import { AsyncLocalStorage } from 'node:async_hooks'
import { x402Facilitator } from '@x402/core/facilitator'
import { HTTPFacilitatorClient } from '@x402/core/server'
import { SettleError, VerifyError } from '@x402/core/types'
import { toFacilitatorEvmSigner } from '@x402/evm'
import { registerExactEvmScheme } from '@x402/evm/exact/facilitator'
import type { Config, NetworkSettings } from '../../config.ts'
import { describeFailure, isBackendFailure, watchedHttp, watchRpc } from '../rpc.ts'
import { chainReader, type ChainReader } from '../reader.ts'
import { facilitatorAuthHeaders, type AuthHeaders } from '../facilitator-auth.ts'
import { tracer, withTraceContext } from '../../lib/traces.ts'
import { caip2 } from './networks.ts'
import type { Payment } from './payload.ts'

export type VerifyOutcome = { kind: 'valid' } | { kind: 'invalid'; reason: string } | { kind: 'backend'; cause: string }

export type SettleOutcome =
  /** The settler says it is done; `hash` is its claim, to be proven on chain. */
  | { kind: 'claimed'; hash: Hex }
  /**
   * Refused. `sent` is false only when no transaction can exist for this attempt (nothing was ever signed); when it
   * is true the refusal is no verdict (a receipt wait that timed out, a facilitator's success:false): the chain decides.
   */
  | { kind: 'refused'; reason: string; sent: boolean }
  /** The backend failed part-way: a transaction may exist. */
  | { kind: 'backend'; cause: string; sent: boolean }

export interface PaymentEngine {
  /** The network it verifies and settles on. */
  network: NetworkSettings
  verify(payment: Payment, requirements: unknown): Promise<VerifyOutcome>
  /** `onSigned` gets the hash of our settling transaction before it is sent (local mode), so a crash cannot lose it. */
  settle(payment: Payment, requirements: unknown, onSigned: (hash: Hex) => Promise<void>): Promise<SettleOutcome>
  chain: ChainReader
}

// The refusals a payer can act on, known by name whatever else the message says.
const KNOWN_REASONS = new RegExp(
  [
    'authorization is used or canceled',
    'transfer amount exceeds balance',
    'authorization is expired',
    'authorization is not yet valid',
    'invalid signature',
  ].join('|'),
  'i',
)

/**
 * Facilitator errors can be multi-line viem dumps: keep one short line. It is stored (a failed payment's error), so a
 * NUL in it becomes U+FFFD: PostgreSQL's text cannot hold NUL, and both engines keep the same line.
 */
export function shortReason(reason: string | undefined, fallback: string): string {
  if (!reason) return fallback
  const known = KNOWN_REASONS.exec(reason)
  if (known) return known[0].toLowerCase().replace(/ /g, '_')
  const line =
    reason
      .replaceAll('\u0000', '\uFFFD')
      .split('\n')
      .map((l) => l.trim())
      .find(Boolean) ?? fallback
  return line.length > 120 ? `${line.slice(0, 117)}...` : line
}

type Facilitator = { verify(p: unknown, r: unknown): Promise<unknown>; settle(p: unknown, r: unknown): Promise<unknown> }
type Verified = { isValid: boolean; invalidReason?: string }
type Settled = { success: boolean; errorReason?: string; transaction?: string }

const TX_HASH = /^0x[0-9a-fA-F]{64}$/

/**
 * Holds the relayer account `name` (`relayer:<address>`) for this process alone among the instances sharing a
 * database, until the release it answers is called.
 */
export type RelayerLock = (name: string) => Promise<() => Promise<void>>

/** How long settlements wait and how widely logs are searched: the same on every network. */
export type EngineTiming = Pick<Config, 'confirmTimeoutS' | 'logWindowBlocks'>

/**
 * Verifies and settles on `network`. `relayerLock`: settlements in process run on several instances with one relayer
 * account (local mode).
 */
export function paymentEngine(network: NetworkSettings, timing: EngineTiming, relayerLock: RelayerLock | null = null): PaymentEngine {
  const transport = watchedHttp(network.rpcUrl, 20_000)
  const chain = chainReader(transport, network.usdcAddress, { logWindow: BigInt(timing.logWindowBlocks) })
  const engine =
    network.settlement === 'local' ? localEngine(network, timing, transport, chain, relayerLock) : remoteEngine(network, timing, chain)
  return tracer() === null ? engine : inSpans(engine)
}

/** With traces on, each verification and settlement is a span; its outcome's kind says how it ended. */
function inSpans(engine: PaymentEngine): PaymentEngine {
  const attributes = { 'x402.settlement': engine.network.settlement, 'x402.network': engine.network.name }
  const span = <T extends { kind: string }>(name: string, work: () => Promise<T>) =>
    tracer()!.span(`x402 ${name}`, attributes, async (open) => {
      const outcome = await work()
      open.set('x402.outcome', outcome.kind)
      if (outcome.kind === 'backend') open.fail(`${name}: the backend failed`)
      return outcome
    })
  return {
    network: engine.network,
    chain: engine.chain,
    verify: (payment, requirements) => span('verify', () => engine.verify(payment, requirements)),
    settle: (payment, requirements, onSigned) => span('settle', () => engine.settle(payment, requirements, onSigned)),
  }
}

/** The facilitator's headers for each call with the running span's traceparent when traces are on (W3C trace context). */
function withTraceHeaders(auth: AuthHeaders | undefined): AuthHeaders | undefined {
  if (tracer() === null) return auth
  return async () => {
    const own = auth ? await auth() : { verify: {}, settle: {}, supported: {} }
    return { verify: withTraceContext(own.verify), settle: withTraceContext(own.settle), supported: withTraceContext(own.supported) }
  }
}

interface Attempt {
  onSigned: (hash: Hex) => Promise<void>
  sent: boolean
  release: (() => Promise<void>) | null
}

/**
 * The relayer's transaction nonces when other instances send with the same account: the account is held from the
 * nonce's read (the node's pending count) until the transaction is handed to the node, so no two instances sign
 * one nonce. A send that fails lets go too; the next read asks the node again.
 */
function heldNonces(lock: RelayerLock, signing: AsyncLocalStorage<Attempt>): NonceManager {
  const pendingCount = ({ address, client }: { address: Address; client: Client }) =>
    getTransactionCount(client, { address, blockTag: 'pending' })
  return {
    async consume(parameters) {
      const attempt = signing.getStore()
      if (attempt && !attempt.release) attempt.release = await lock(`relayer:${parameters.address.toLowerCase()}`)
      return pendingCount(parameters)
    },
    increment() {},
    get: pendingCount,
    reset() {},
  }
}

/** A lock by name within this process: what RelayerLock is across instances, for an instance alone. */
function processLock(): RelayerLock {
  const tails = new Map<string, Promise<void>>()
  return async (name) => {
    const before = tails.get(name) ?? Promise.resolve()
    let release = () => {}
    const mine = new Promise<void>((resolve) => (release = resolve))
    const tail = before.then(() => mine)
    tails.set(name, tail)
    await before
    return async () => {
      release()
      if (tails.get(name) === tail) tails.delete(name)
    }
  }
}

/** Verifies and settles in process; our relayer wallet submits transferWithAuthorization and pays gas. */
function localEngine(
  network: NetworkSettings,
  timing: EngineTiming,
  transport: ReturnType<typeof watchedHttp>,
  chain: ChainReader,
  relayerLock: RelayerLock | null,
): PaymentEngine {
  if (!network.relayerKey) throw new Error(`settling on ${network.name} in process needs its relayer key (the wallet that pays gas)`)
  const signing = new AsyncLocalStorage<Attempt>()
  // Parallel settlements need distinct transaction nonces, and no gap: each is read from the node's pending count
  // under a lock held until its transaction is sent (or its signing failed), across the instances that share the
  // relayer, or in this process alone. viem's counting manager handed out a nonce a failed send never used, and every
  // later settlement waited behind the gap until its receipt wait ran out (a 503 to a buyer whose payment was good).
  const nonceManager = heldNonces(relayerLock ?? processLock(), signing)
  const account = privateKeyToAccount(network.relayerKey as Hex, { nonceManager })
  const letGo = async (attempt: Attempt) => {
    const release = attempt.release
    attempt.release = null
    await release?.().catch(() => {}) // a lost lease connection let go already
  }
  // viem sends through the client's own `sendRawTransaction` when it has one: the signed bytes' hash is known,
  // and persisted by the caller, before anything leaves the process.
  const base = createClient({ account, transport, pollingInterval: 250, cacheTime: 0 })
  const wallet = base
    .extend(() => ({
      async sendRawTransaction(args: Parameters<typeof sendRawTransaction>[1]) {
        const attempt = signing.getStore()
        if (!attempt) return sendRawTransaction(base, args)
        try {
          await attempt.onSigned(keccak256(args.serializedTransaction)) // durable before the bytes leave
          attempt.sent = true
          return await sendRawTransaction(base, args)
        } finally {
          await letGo(attempt) // the node has it (its pending count moved), or it never will
        }
      },
    }))
    .extend(walletActions)
    .extend(publicActions)
  const signer = toFacilitatorEvmSigner({ ...wallet, address: account.address } as never, {
    confirmationTimeoutMs: timing.confirmTimeoutS * 1000,
  })
  const facilitator = registerExactEvmScheme(new x402Facilitator(), { signer, networks: caip2(network) }) as unknown as Facilitator

  return {
    network,
    chain,
    async verify(payment, requirements) {
      const { result, failure } = await watchRpc(async () => {
        try {
          return (await facilitator.verify(payment.wire.json, requirements)) as Verified
        } catch (error) {
          return { isValid: false, invalidReason: shortReason((error as Error).message, 'verification_failed'), error }
        }
      })
      if (result.isValid) return { kind: 'valid' }
      const thrown = (result as { error?: unknown }).error
      if (failure || (thrown && isBackendFailure(thrown))) return { kind: 'backend', cause: describeFailure(failure ?? thrown) }
      return { kind: 'invalid', reason: shortReason(result.invalidReason, 'invalid_payment') }
    },
    async settle(payment, requirements, onSigned) {
      const attempt: Attempt = { onSigned, sent: false, release: null }
      const { result, failure } = await watchRpc(() =>
        signing.run(attempt, async (): Promise<Settled & { error?: unknown }> => {
          try {
            return (await facilitator.settle(payment.wire.json, requirements)) as Settled
          } catch (error) {
            return { success: false, errorReason: (error as Error).message, error }
          } finally {
            await letGo(attempt) // signing failed after the nonce was read
          }
        }),
      )
      if (result.success && result.transaction && TX_HASH.test(result.transaction))
        return { kind: 'claimed', hash: result.transaction as Hex }
      if (failure || (result.error && isBackendFailure(result.error)))
        return { kind: 'backend', cause: describeFailure(failure ?? result.error), sent: attempt.sent }
      return { kind: 'refused', reason: shortReason(result.errorReason, 'settlement_failed'), sent: attempt.sent }
    },
  }
}

/** Posts the payment to an x402 facilitator (`/verify`, `/settle`); we never know whether it sent a transaction. */
function remoteEngine(network: NetworkSettings, timing: EngineTiming, chain: ChainReader): PaymentEngine {
  const facilitator = new HTTPFacilitatorClient({
    url: network.facilitatorUrl,
    timeoutMs: Math.max(timing.confirmTimeoutS, 10) * 1000,
    createAuthHeaders: withTraceHeaders(facilitatorAuthHeaders(network.facilitatorAuth, network.facilitatorUrl)),
  }) as unknown as Facilitator
  return {
    network,
    chain,
    async verify(payment, requirements) {
      try {
        const result = (await facilitator.verify(payment.wire.json, requirements)) as Verified
        return result.isValid ? { kind: 'valid' } : { kind: 'invalid', reason: shortReason(result.invalidReason, 'invalid_payment') }
      } catch (error) {
        // A non-2xx answer carrying a verdict is the facilitator's refusal; anything else means it was not reachable.
        if (error instanceof VerifyError)
          return { kind: 'invalid', reason: shortReason(error.invalidReason ?? error.message, 'invalid_payment') }
        return { kind: 'backend', cause: `facilitator: ${describeFailure(error)}` }
      }
    },
    async settle(payment, requirements) {
      try {
        const result = (await facilitator.settle(payment.wire.json, requirements)) as Settled
        if (result.success && result.transaction && TX_HASH.test(result.transaction))
          return { kind: 'claimed', hash: result.transaction as Hex }
        return { kind: 'refused', reason: shortReason(result.errorReason, 'settlement_failed'), sent: true }
      } catch (error) {
        if (error instanceof SettleError)
          return { kind: 'refused', reason: shortReason(error.errorReason ?? error.message, 'settlement_failed'), sent: true }
        return { kind: 'backend', cause: `facilitator: ${describeFailure(error)}`, sent: true }
      }
    },
  }
}
