// Publishes a paid entry on a running Trellis server, as a creator would: signs in with a wallet, creates a feed and
// a paid text entry, and prints the entry's URL and the command that buys it (scripts/buy.ts).
//
//   npx bun scripts/publish.ts [--url http://127.0.0.1:8402] [--key 0xCREATOR_KEY] [--price 10000] [--text "..."] [--pass]
//
// Without --key a fresh creator wallet is made (its key is printed). --price is in USDC's smallest unit
// (10000 = 0.01 USDC). --pass also puts the feed's pass on sale (five times the price, for 30 days) and prints the
// URL that buys it.
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { b64, call } from '../dev/api.ts'
import { usageOf } from '../dev/usage.ts'

const usage = usageOf('bun scripts/publish.ts [--url URL] [--key 0xPRIVATE_KEY] [--price UNITS] [--text TEXT] [--pass]')

const args = process.argv.slice(2)
let url = 'http://127.0.0.1:8402'
let key = ''
let price = '10000'
let text = `A paid note, published ${new Date().toISOString()}.`
let pass = false
for (let i = 0; i < args.length; i++) {
  const arg = args[i]!
  const value = () => args[++i] ?? usage(`${arg} needs a value`)
  if (arg === '--url') url = value().replace(/\/+$/, '')
  else if (arg === '--key') key = value()
  else if (arg === '--price') price = value()
  else if (arg === '--text') text = value()
  else if (arg === '--pass') pass = true
  else if (arg === '--help' || arg === '-h') usage()
  else usage(`unknown argument ${arg}`)
}
if (!/^\d+$/.test(price) || BigInt(price) <= 0n) usage('--price must be a positive integer (smallest unit: 10000 = 0.01 USDC)')
if (key && !/^0x[0-9a-fA-F]{64}$/.test(key)) usage('--key must be 0x followed by 64 hex characters')
if (!key) key = generatePrivateKey()
const creator = privateKeyToAccount(key as `0x${string}`)

const fail = (what: string, reply: { status: number; text: string }): never => {
  console.error(`publish: ${what} answered ${reply.status}: ${reply.text}`)
  process.exit(1)
}
const feed = await call(url, 'POST', '/v1/feeds', {
  wallet: creator,
  body: { name: 'Quickstart feed', description: 'made by scripts/publish.ts', tags: ['quickstart'] },
})
if (feed.status !== 201) fail('POST /v1/feeds', feed)
const entry = await call(url, 'POST', `/v1/feeds/${feed.body.id}/entries`, {
  wallet: creator,
  body: {
    content_base64: b64(text),
    mime_type: 'text/plain',
    title: 'A paid note',
    is_free: false,
    price: { amount: price, currency: 'USDC' },
  },
})
if (entry.status !== 201) fail(`POST /v1/feeds/${feed.body.id}/entries`, entry)

const entryUrl = `${url}/v1/feeds/${feed.body.id}/entries/${entry.body.id}`
console.log(`creator ${creator.address} (key ${key})`)
console.log(`feed    ${feed.body.id}`)
console.log(`entry   ${entry.body.id}, price ${price} (${Number(price) / 1e6} USDC)`)
console.log(`\n${entryUrl}`)
console.log(`\n# buy it:\nnpx bun scripts/buy.ts ${entryUrl} --key <BUYER_KEY>`)
if (pass) {
  const terms = { price: { amount: String(BigInt(price) * 5n), currency: 'USDC' }, duration_s: 30 * 86_400 }
  const offered = await call(url, 'PUT', `/v1/feeds/${feed.body.id}/pass`, { wallet: creator, body: terms })
  if (offered.status !== 200) fail(`PUT /v1/feeds/${feed.body.id}/pass`, offered)
  const passUrl = `${url}/v1/feeds/${feed.body.id}/pass/purchases`
  console.log(`\npass    ${terms.price.amount} (${Number(terms.price.amount) / 1e6} USDC) for 30 days: every paid entry of the feed`)
  console.log(`\n# buy the pass, then read the entry with sign-in-with-x, paying nothing:`)
  console.log(`npx bun scripts/buy.ts ${passUrl} --key <BUYER_KEY>\nnpx bun scripts/buy.ts ${entryUrl} --key <BUYER_KEY> --sign-in`)
}
