// Reads that decide a payment's fate: the chain head (chain time), a transaction's receipt, EIP-3009 authorization
// state, and the AuthorizationUsed/Canceled event of one authorization, searched in bounded block windows.
import {
  BaseError,
  HttpRequestError,
  TimeoutError,
  createPublicClient,
  encodeEventTopics,
  isAddressEqual,
  numberToHex,
  parseAbi,
  parseEventLogs,
  TransactionReceiptNotFoundError,
  type Hex,
  type Log,
  type Transport,
} from 'viem'
import { proveSettlement, TOKEN_EVENTS, type ExpectedTransfer, type Proof } from './settlement-proof.ts'

const AUTHORIZATION_STATE = parseAbi(['function authorizationState(address authorizer, bytes32 nonce) view returns (bool)'])
const USED = TOKEN_EVENTS.find((e) => e.name === 'AuthorizationUsed')!
const CANCELED = TOKEN_EVENTS.find((e) => e.name === 'AuthorizationCanceled')!

export interface Head {
  number: bigint
  timestamp: bigint
}
export interface AuthorizationEvent {
  kind: 'used' | 'canceled'
  hash: Hex
  block: bigint
}

/** An eth_getLogs refused for its size (public RPCs cap the block range or the result count), not an outage. */
function isRangeRefusal(error: unknown): boolean {
  if (!(error instanceof BaseError) || error.walk((e) => e instanceof HttpRequestError || e instanceof TimeoutError)) return false
  return /range|limit|exceed|10000|query returned more/i.test(error.message)
}

export function chainReader(transport: Transport, token: Hex, options: { logWindow: bigint }) {
  const client = createPublicClient({ transport, pollingInterval: 250, cacheTime: 0 })
  // Learned from refusals: the widest range this RPC accepts.
  let window = options.logWindow

  async function head(): Promise<Head> {
    const block = await client.getBlock({ blockTag: 'latest' })
    return { number: block.number!, timestamp: block.timestamp }
  }

  async function receipt(hash: Hex) {
    try {
      return await client.getTransactionReceipt({ hash })
    } catch (error) {
      if (error instanceof TransactionReceiptNotFoundError) return null
      throw error
    }
  }

  // Both events index (authorizer, nonce) the same way: one filter matches either. (viem's getLogs drops `args` when
  // given several events, so the topics are built here.)
  async function logsIn(from: Hex, nonce: Hex, fromBlock: bigint, toBlock: bigint): Promise<AuthorizationEvent | null> {
    const [used, authorizer, nonceTopic] = encodeEventTopics({ abi: [USED], args: { authorizer: from, nonce } })
    const [canceled] = encodeEventTopics({ abi: [CANCELED] })
    const raw = await client.request({
      method: 'eth_getLogs',
      params: [
        {
          address: token,
          topics: [[used, canceled], authorizer, nonceTopic] as never,
          fromBlock: numberToHex(fromBlock),
          toBlock: numberToHex(toBlock),
        },
      ],
    })
    // Re-checked here: an RPC that ignores topics must not make another payer's event look like this one.
    const first = parseEventLogs({ abi: [USED, CANCELED], logs: raw as Log[] }).find(
      (l) =>
        !l.removed &&
        isAddressEqual(l.address, token) &&
        isAddressEqual(l.args.authorizer, from) &&
        l.args.nonce.toLowerCase() === nonce.toLowerCase(),
    )
    if (!first) return null
    return { kind: first.eventName === 'AuthorizationUsed' ? 'used' : 'canceled', hash: first.transactionHash!, block: first.blockNumber! }
  }

  return {
    head,
    receipt,
    authorizationUsed: (from: Hex, nonce: Hex) =>
      client.readContract({ address: token, abi: AUTHORIZATION_STATE, functionName: 'authorizationState', args: [from, nonce] }),

    /** Does transaction `hash` settle this payment? null: no receipt (yet). */
    async prove(hash: Hex, expected: ExpectedTransfer): Promise<Proof | null> {
      const found = await receipt(hash)
      return found ? proveSettlement(found, expected) : null
    },

    /**
     * The event that spent (or cancelled) an authorization, searched from `fromBlock` to the head in windows the RPC
     * accepts, halving the window when a range is refused. An EIP-3009 nonce is spent at most once.
     */
    async findAuthorizationEvent(from: Hex, nonce: Hex, fromBlock: bigint, toBlock?: bigint): Promise<AuthorizationEvent | null> {
      const last = toBlock ?? (await head()).number
      let start = fromBlock < 0n ? 0n : fromBlock
      while (start <= last) {
        const end = start + window - 1n < last ? start + window - 1n : last
        let found: AuthorizationEvent | null
        try {
          found = await logsIn(from, nonce, start, end)
        } catch (error) {
          if (window > 1n && isRangeRefusal(error)) {
            window = window / 2n
            continue
          }
          throw error
        }
        if (found) return found
        start = end + 1n
      }
      return null
    },
  }
}
export type ChainReader = ReturnType<typeof chainReader>
