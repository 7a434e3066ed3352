// The API explorer's own script (/v1/docs): starts Swagger UI, and once a browser wallet is connected, signs each
// "Try it out" request to a route that takes a wallet signature, as the API asks: a fresh nonce, its message signed
// with personal_sign, the four headers. The Content-Security-Policy allows no inline script, so this is a file.
'use strict'

const WALLET_SCHEME = 'walletSignature'
let connected = null // the address the wallet shared

/** Path templates of the operations that take a wallet signature, by method, as regular expressions. */
function signedOperations(spec) {
  const found = []
  for (const [path, operations] of Object.entries(spec.paths ?? {})) {
    for (const [method, operation] of Object.entries(operations)) {
      if (!(operation.security ?? []).some((requirement) => WALLET_SCHEME in requirement)) continue
      const pattern = new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`)
      found.push({ method: method.toUpperCase(), pattern })
    }
  }
  return found
}

async function signedHeaders(address) {
  const issued = await fetch('/v1/auth/nonce', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ wallet_address: address }) })
  const nonce = await issued.json()
  const hex = `0x${Array.from(new TextEncoder().encode(nonce.message), (b) => b.toString(16).padStart(2, '0')).join('')}`
  const signature = await window.ethereum.request({ method: 'personal_sign', params: [hex, address] })
  return { 'x-wallet-address': nonce.wallet_address, 'x-signature': signature, 'x-message': nonce.message, 'x-timestamp': String(Math.floor(Date.now() / 1000)) }
}

function walletBar(onConnect) {
  const bar = document.getElementById('wallet-bar')
  const button = document.getElementById('connect-wallet')
  const status = document.getElementById('wallet-status')
  if (!window.ethereum) {
    status.textContent = 'No browser wallet: signed routes need the four x-wallet headers, set by hand under Authorize.'
    return
  }
  button.hidden = false
  button.addEventListener('click', async () => {
    try {
      const [address] = await window.ethereum.request({ method: 'eth_requestAccounts' })
      connected = address
      onConnect(address)
      button.hidden = true
      status.textContent = `Signing "Try it out" requests with ${address}: your wallet asks once per request.`
    } catch (error) {
      status.textContent = `Not connected: ${error?.message ?? error}`
    }
  })
  bar.hidden = false
}

window.addEventListener('load', () => {
  let operations = []
  const ui = SwaggerUIBundle({
    url: '/v1/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    requestInterceptor: async (request) => {
      if (!connected || request.loadSpec) return request
      const url = new URL(request.url, location.href)
      if (url.origin !== location.origin || !operations.some((o) => o.method === request.method.toUpperCase() && o.pattern.test(url.pathname))) return request
      request.headers = { ...request.headers, ...(await signedHeaders(connected)) }
      return request
    },
  })
  window.ui = ui
  walletBar(() => (operations = signedOperations(ui.specSelectors.specJson().toJS())))
})
