// Receives a creator's webhooks on this machine: listens on http://127.0.0.1, registers that URL as the wallet's
// endpoint on a development server started with TRELLIS_WEBHOOKS_ALLOW_LOCAL=1 (docs/webhooks.md), asks the server for
// a test ping, and prints every delivery that arrives, its signature verified with the endpoint's secret.
//
//   npx bun scripts/try-webhook.ts [--url http://127.0.0.1:8402] [--key 0xCREATOR_KEY] [--port 0] [--once]
//
// Without --key a fresh creator wallet is made (its key is printed: publish with it, `scripts/publish.ts --key`, and
// its sales arrive here too). --once stops after the ping; otherwise it listens until Ctrl-C, then removes the endpoint.
import { Webhook } from 'standardwebhooks'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { call } from '../dev/api.ts'
import { usageOf } from '../dev/usage.ts'

const usage = usageOf('bun scripts/try-webhook.ts [--url URL] [--key 0xPRIVATE_KEY] [--port N] [--once]')

const args = process.argv.slice(2)
let url = 'http://127.0.0.1:8402'
let key = ''
let port = 0
let once = false
for (let i = 0; i < args.length; i++) {
  const arg = args[i]!
  const value = () => args[++i] ?? usage(`${arg} needs a value`)
  if (arg === '--url') url = value().replace(/\/+$/, '')
  else if (arg === '--key') key = value()
  else if (arg === '--port') port = Number(value())
  else if (arg === '--once') once = true
  else if (arg === '--help' || arg === '-h') usage()
  else usage(`unknown argument ${arg}`)
}
if (key && !/^0x[0-9a-fA-F]{64}$/.test(key)) usage('--key must be 0x followed by 64 hex characters')
if (!Number.isInteger(port) || port < 0 || port > 65535) usage('--port must be a port number (0: any free one)')
if (!key) key = generatePrivateKey()
const creator = privateKeyToAccount(key as `0x${string}`)

const fail = (what: string, reply: { status: number; text: string }): never => {
  console.error(`try-webhook: ${what} answered ${reply.status}: ${reply.text}`)
  process.exit(1)
}

let verifier: Webhook | null = null
let pinged: () => void = () => {}
const pingArrived = new Promise<void>((resolve) => (pinged = resolve))
const receiver = Bun.serve({
  hostname: '127.0.0.1',
  port,
  async fetch(request) {
    const body = await request.text()
    const headers = Object.fromEntries(request.headers as unknown as Iterable<[string, string]>)
    try {
      const event = verifier!.verify(body, headers) as { type: string; timestamp: string; data: unknown }
      console.log(`received ${event.type} (webhook-id ${headers['webhook-id']}), signature verified: ${JSON.stringify(event.data)}`)
      if (event.type === 'ping') pinged()
      return new Response(null, { status: 204 })
    } catch (error) {
      console.log(`received a request whose signature does not verify (${(error as Error).message}): answered 400`)
      return new Response(null, { status: 400 })
    }
  },
})
const hookUrl = `http://127.0.0.1:${receiver.port}/webhook`

const registered = await call(url, 'POST', '/v1/webhooks', {
  wallet: creator,
  body: { url: hookUrl, description: 'scripts/try-webhook.ts' },
})
if (registered.status !== 201) {
  receiver.stop(true)
  fail('POST /v1/webhooks', registered)
}
verifier = new Webhook(registered.body.secret)
const id: string = registered.body.id
console.log(`creator  ${creator.address} (key ${key})`)
console.log(`endpoint ${id} → ${hookUrl}`)

const tested = await call(url, 'POST', `/v1/webhooks/${id}/test`, { wallet: creator })
if (tested.status !== 200) fail(`POST /v1/webhooks/${id}/test`, tested)
console.log(`test     ${JSON.stringify(tested.body)}`)
if (tested.body.delivered) await pingArrived

const remove = async () => {
  await call(url, 'DELETE', `/v1/webhooks/${id}`, { wallet: creator }).catch(() => {})
  receiver.stop(true)
}
if (once) {
  await remove()
  process.exit(tested.body.delivered ? 0 : 1)
}
console.log('listening for deliveries: Ctrl-C removes the endpoint and stops')
process.on('SIGINT', () => void remove().then(() => process.exit(0)))
process.on('SIGTERM', () => void remove().then(() => process.exit(0)))
