// Buys a paid entry or a feed's pass with x402, the way any client would: @x402/fetch answers the 402 by signing a
// USDC authorization (EIP-3009) with the buyer's key and repeating the request; the server settles it on chain.
// With --sign-in it reads an entry already paid for (bought, or under a pass) with x402's sign-in-with-x instead:
// @x402/extensions' client signs the 402's challenge, and nothing is paid.
//
//   npx bun scripts/buy.ts <entry URL | pass purchase URL> --key 0xBUYER_KEY [--sign-in]
//
// Prints the settlement (transaction hash, payer) and the entry's content, or the pass bought.
import { privateKeyToAccount } from 'viem/accounts'
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from '@x402/fetch'
import { registerExactEvmScheme } from '@x402/evm/exact/client'
import { toClientEvmSigner } from '@x402/evm'
import { wrapFetchWithSIWx } from '@x402/extensions/sign-in-with-x'
import { usageOf } from '../dev/usage.ts'

const usage = usageOf('bun scripts/buy.ts <entry URL | pass purchase URL> --key 0xBUYER_PRIVATE_KEY [--sign-in]')

const args = process.argv.slice(2)
let target = ''
let key = ''
let signIn = false
for (let i = 0; i < args.length; i++) {
  const arg = args[i]!
  if (arg === '--key') key = args[++i] ?? usage('--key needs a value')
  else if (arg === '--sign-in') signIn = true
  else if (arg === '--help' || arg === '-h') usage()
  else if (!arg.startsWith('--') && !target) target = arg
  else usage(`unknown argument ${arg}`)
}
if (!/^https?:\/\//.test(target)) usage('the entry URL is required (printed by scripts/publish.ts)')
if (!/^0x[0-9a-fA-F]{64}$/.test(key))
  usage('--key must be 0x followed by 64 hex characters (a buyer key printed by scripts/chain.ts --buyers 1)')
const isPass = new URL(target).pathname.endsWith('/pass/purchases')
if (isPass && signIn) usage('--sign-in reads an entry; a pass is bought')

const buyer = privateKeyToAccount(key as `0x${string}`)
const client = new x402Client()
registerExactEvmScheme(client, { signer: toClientEvmSigner(buyer as never) })
const pay = signIn ? wrapFetchWithSIWx(fetch, buyer) : wrapFetchWithPayment(fetch, client)

const response = await pay(target, isPass ? { method: 'POST' } : {})
const text = await response.text()
if (response.status !== (isPass ? 201 : 200)) {
  console.error(`buy: ${response.status} ${text}`)
  process.exit(1)
}
const header = response.headers.get('payment-response') ?? response.headers.get('x-payment-response')
if (header) {
  const settlement = decodePaymentResponseHeader(header)
  console.log(`paid: transaction ${settlement.transaction || '(none: already yours)'} on ${settlement.network}, payer ${settlement.payer}`)
} else if (signIn) console.log(`signed in with sign-in-with-x as ${buyer.address}: nothing paid`)
if (isPass) {
  const pass = JSON.parse(text) as { id: string; feed_id: string; expires_at: number }
  console.log(`pass ${pass.id} to feed ${pass.feed_id}, runs until ${new Date(pass.expires_at * 1000).toISOString()}`)
  process.exit(0)
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
