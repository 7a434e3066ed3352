// What counts as a purchase on chain: the settling transaction succeeded and, in it, the token emitted
// AuthorizationUsed(payer, nonce) immediately next to Transfer(payer → pay_to, price). A used nonce alone proves
// nothing (the payer may have spent it on another transfer of his own), and a Transfer alone could be anyone's.
import { decodeEventLog, isAddressEqual, parseAbi, type Hex, type Log } from 'viem'

export const TOKEN_EVENTS = parseAbi([
  'event Transfer(address indexed from, address indexed to, uint256 value)',
  'event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)',
  'event AuthorizationCanceled(address indexed authorizer, bytes32 indexed nonce)',
])

export interface ExpectedTransfer {
  token: Hex
  payer: string
  payTo: string
  amount: bigint
  nonce: string
}

export interface ReceiptLike {
  status: 'success' | 'reverted'
  transactionHash: Hex
  blockNumber: bigint
  logs: readonly Pick<Log, 'address' | 'topics' | 'data' | 'logIndex'>[]
}

export type Proof =
  | { kind: 'paid'; hash: Hex; block: bigint }
  /** The nonce was used here, but not for this payment (another payee or amount): the payment can never happen. */
  | { kind: 'used-otherwise'; hash: Hex; block: bigint }
  /** This transaction does not use the authorization at all (reverted, or unrelated). */
  | { kind: 'absent' }

type Decoded = { address: Hex; logIndex: number; name: string; args: Record<string, unknown> }

function decodeTokenLogs(receipt: ReceiptLike, token: Hex): Decoded[] {
  const out: Decoded[] = []
  for (const log of receipt.logs) {
    if (!isAddressEqual(log.address, token)) continue
    try {
      const event = decodeEventLog({ abi: TOKEN_EVENTS, topics: log.topics as [Hex, ...Hex[]], data: log.data })
      out.push({ address: log.address, logIndex: Number(log.logIndex), name: event.eventName, args: event.args as Record<string, unknown> })
    } catch {
      // another event of the token (Approval, Mint, …)
    }
  }
  return out.sort((a, b) => a.logIndex - b.logIndex)
}

/** Does this receipt settle exactly this payment? */
export function proveSettlement(receipt: ReceiptLike, expected: ExpectedTransfer): Proof {
  if (receipt.status !== 'success') return { kind: 'absent' }
  const logs = decodeTokenLogs(receipt, expected.token)
  const at = logs.findIndex(
    (l) =>
      l.name === 'AuthorizationUsed' &&
      isAddressEqual(l.args.authorizer as Hex, expected.payer as Hex) &&
      (l.args.nonce as string).toLowerCase() === expected.nonce.toLowerCase(),
  )
  if (at < 0) return { kind: 'absent' }
  // FiatToken emits AuthorizationUsed and then the Transfer it authorised, with nothing in between.
  const isPayment = (l: Decoded | undefined) =>
    l !== undefined &&
    l.name === 'Transfer' &&
    l.logIndex - logs[at].logIndex === 1 &&
    isAddressEqual(l.args.from as Hex, expected.payer as Hex) &&
    isAddressEqual(l.args.to as Hex, expected.payTo as Hex) &&
    (l.args.value as bigint) === expected.amount
  const proof = { hash: receipt.transactionHash, block: receipt.blockNumber }
  return isPayment(logs[at + 1]) ? { kind: 'paid', ...proof } : { kind: 'used-otherwise', ...proof }
}
