// Buys a paid entry with x402, the way any client would: @x402/fetch answers the 402 by signing a USDC
// authorization (EIP-3009) with the buyer's key and repeating the request; the server settles it on chain.
//
//   npx bun scripts/buy.ts <entry URL> --key 0xBUYER_KEY
//
// Prints the settlement (transaction hash, payer) and the entry's content.
import { privateKeyToAccount } from 'viem/accounts'
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from '@x402/fetch'
import { registerExactEvmScheme } from '@x402/evm/exact/client'
import { toClientEvmSigner } from '@x402/evm'
import { usageOf } from '../dev/usage.ts'

const usage = usageOf('bun scripts/buy.ts <entry URL> --key 0xBUYER_PRIVATE_KEY')

const args = process.argv.slice(2)
let target = ''
let key = ''
for (let i = 0; i < args.length; i++) {
  const arg = args[i]!
  if (arg === '--key') key = args[++i] ?? usage('--key needs a value')
  else if (arg === '--help' || arg === '-h') usage()
  else if (!arg.startsWith('--') && !target) target = arg
  else usage(`unknown argument ${arg}`)
}
if (!/^https?:\/\//.test(target)) usage('the entry URL is required (printed by scripts/publish.ts)')
if (!/^0x[0-9a-fA-F]{64}$/.test(key))
  usage('--key must be 0x followed by 64 hex characters (a buyer key printed by scripts/chain.ts --buyers 1)')

const buyer = privateKeyToAccount(key as `0x${string}`)
const client = new x402Client()
registerExactEvmScheme(client, { signer: toClientEvmSigner(buyer as never) })
const pay = wrapFetchWithPayment(fetch, client)

const response = await pay(target)
const text = await response.text()
if (response.status !== 200) {
  console.error(`buy: ${response.status} ${text}`)
  process.exit(1)
}
const header = response.headers.get('payment-response') ?? response.headers.get('x-payment-response')
if (header) {
  const settlement = decodePaymentResponseHeader(header)
  console.log(`paid: transaction ${settlement.transaction || '(none: already yours)'} on ${settlement.network}, payer ${settlement.payer}`)
}
const entry = JSON.parse(text) as { title: string | null; price: string; content_url: string; mime_type: string }
console.log(`entry "${entry.title ?? ''}" (${entry.price} units)`)
const content = await fetch(entry.content_url)
const bytes = new Uint8Array(await content.arrayBuffer())
console.log(
  entry.mime_type.startsWith('text/')
    ? `content: ${new TextDecoder().decode(bytes)}`
    : `content: ${bytes.length} bytes of ${entry.mime_type}`,
)
