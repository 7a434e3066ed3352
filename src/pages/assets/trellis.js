// Trellis pages: their script, with content.js (the Content-Security-Policy allows no other, and no inline script).
// It pays a paywall with the browser's wallet (EIP-1193) and signs in; content.js shows what was bought.
'use strict'

const $ = (id) => document.getElementById(id)
const pageData = () => {
  const element = $('trellis-data')
  return element ? JSON.parse(element.textContent) : null
}
const wallet = () => window.ethereum ?? null

function say(text, tone = '') {
  const status = $('status')
  if (!status) return
  status.textContent = text
  status.className = `status ${tone}`
}

const hex = (bytes) => `0x${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`
const utf8Base64 = (text) => btoa(Array.from(new TextEncoder().encode(text), (b) => String.fromCharCode(b)).join(''))

/** A random 32-byte EIP-3009 nonce as 0x-hex. */
const randomNonce = () => hex(crypto.getRandomValues(new Uint8Array(32)))

async function onChain(provider, chainId) {
  const current = Number.parseInt(await provider.request({ method: 'eth_chainId' }), 16)
  if (current === chainId) return
  say('Switch your wallet to the payment network…')
  await provider.request({ method: 'wallet_switchEthereumChain', params: [{ chainId: `0x${chainId.toString(16)}` }] })
}

/**
 * The X-PAYMENT header: an EIP-3009 transferWithAuthorization signed by the wallet, as an x402 v1 client sends it.
 * The page gives the typed data's types and domain; the authorization is made here.
 */
async function paymentHeader(provider, from, data) {
  const r = data.requirement
  const now = Math.floor(Date.now() / 1000)
  const authorization = {
    from,
    to: r.payTo,
    value: r.maxAmountRequired,
    validAfter: String(now - 600),
    validBefore: String(now + r.maxTimeoutSeconds),
    nonce: randomNonce(),
  }
  const typedData = { ...data.typedData, message: authorization }
  say('Confirm the payment in your wallet…')
  const signature = await provider.request({ method: 'eth_signTypedData_v4', params: [from, JSON.stringify(typedData)] })
  return btoa(JSON.stringify({ x402Version: 1, scheme: 'exact', network: r.network, payload: { signature, authorization } }))
}

// Once the payment header has left the page, only the chain says whether it was taken: a 503 (or no answer) means it
// may still be, so the page says so and asks again with the same header (never a new one: that could pay twice).
const MAYBE_TAKEN = 'Your payment was sent and is being confirmed on chain: it may still be taken, so do not pay again.'

/** Waits `ms`, or until the person presses "Check again". */
function pause(ms) {
  const button = $('pay')
  return new Promise((resolve) => {
    const now = () => {
      clearTimeout(timer)
      button.onclick = null
      button.disabled = true
      resolve()
    }
    const timer = setTimeout(now, ms)
    button.textContent = 'Check again'
    button.onclick = now
    button.disabled = false
  })
}

/**
 * Sends the payment to the URL that asked for it, asking again while it settles. `response` is null when it still
 * does after a while; `waited` says a 503 was answered on the way.
 */
async function sendPayment(path, header, method) {
  let waited = false
  for (let attempt = 0; attempt < 12; attempt++) {
    const response = await fetch(path, { method, headers: { 'X-PAYMENT': header, Accept: 'application/json, */*' } })
    if (response.status !== 503) return { response, waited }
    waited = true
    say(`${MAYBE_TAKEN} Checking again shortly…`, 'pending')
    await pause(Math.min(Number(response.headers.get('retry-after') ?? '5'), 15) * 1000)
  }
  return { response: null, waited }
}

async function reasonOf(response) {
  try {
    const body = await response.json()
    return body.error ?? body.details ?? `HTTP ${response.status}`
  } catch {
    return `HTTP ${response.status}`
  }
}

function transactionOf(response) {
  const header = response.headers.get('x-payment-response')
  if (!header) return null
  try {
    return JSON.parse(atob(header)).transaction || null
  } catch {
    return null
  }
}

/** The offer on the network chosen in the page's select (the first, without one). */
function chosen(data) {
  const choice = data.choices?.[Number($('pay-network')?.value ?? 0)]
  return choice ? { ...data, requirement: choice.requirement, typedData: choice.typedData } : data
}

/** With several networks offered, the one the wallet is on is chosen first (the person may choose another). */
async function chooseWalletNetwork(data) {
  const select = $('pay-network')
  const provider = wallet()
  if (!select || !provider) return
  try {
    const current = Number.parseInt(await provider.request({ method: 'eth_chainId' }), 16)
    const at = data.choices.findIndex((choice) => choice.typedData.domain.chainId === current)
    if (at >= 0) select.value = String(at)
  } catch {}
}

async function pay(offered) {
  const data = chosen(offered)
  const provider = wallet()
  const button = $('pay')
  button.disabled = true
  let header
  try {
    say('Connect your wallet…')
    const [from] = await provider.request({ method: 'eth_requestAccounts' })
    if (!from) throw new Error('the wallet shared no account')
    await onChain(provider, data.typedData.domain.chainId)
    header = await paymentHeader(provider, from, data)
  } catch (error) {
    say(`Not paid: ${error?.message ?? error}`, 'bad')
    button.disabled = false
    return
  }
  say('Paying…')
  await settle(data, header, false)
}

/**
 * Sends the signed payment (again, when `sent` already) and shows the outcome. Once it was sent, the button never
 * signs another payment: while the chain has not decided it checks again, and once the chain took it, it signs in.
 */
async function settle(data, header, sent) {
  const button = $('pay')
  button.disabled = true
  let response
  try {
    const answer = await sendPayment(new URL(data.requirement.resource).pathname, header, data.sold === 'pass' ? 'POST' : 'GET')
    response = answer.response
    sent ||= answer.waited
  } catch (error) {
    say(`No answer from the server (${error?.message ?? error}). ${MAYBE_TAKEN}`, 'pending')
    response = null
  }
  if (!response) {
    if (!$('status').classList.contains('pending')) say(MAYBE_TAKEN, 'pending')
    return offer(button, 'Check again', () => settle(data, header, true))
  }
  if (!response.ok) {
    const reason = await reasonOf(response)
    // This payment was answered 503 before and the chain has taken it since. A settled payment header is no ticket
    // to the content (it is public on chain): the payer signs in to read what was bought.
    if (sent && response.status === 402 && reason.startsWith('payment_already_settled')) {
      say('Paid: the chain confirmed your payment. Sign in with your wallet to read it.', 'good')
      return offer(button, 'Sign in to read', () => signIn(button))
    }
    // The server answers 402 or 502 only when nothing was charged (or the chain refused it); the rest before paying.
    say(`The payment was not taken: ${reason}`, 'bad')
    return offer(button, button.dataset.payLabel, () => pay(data))
  }
  const transaction = transactionOf(response)
  // No transaction: nothing was charged, the wallet had it already (it bought it, owns it, or holds a pass).
  say(transaction ? `Paid. Transaction ${transaction}` : 'You already own this: nothing was charged.', 'good')
  button.hidden = true
  if (data.sold === 'pass') return showPass(await response.json())
  const url = data.sold === 'record' ? (await response.json()).content_url : URL.createObjectURL(await response.blob())
  await showContent($('bought'), url, data.mimeType, data.title)
}

/** The paywall's one button, now doing `action` under `label`. */
function offer(button, label, action) {
  button.textContent = label
  button.onclick = action
  button.disabled = false
}

function startPaywall(data) {
  const button = $('pay')
  if (!wallet()) {
    say('No wallet found in this browser. Install a wallet extension (EIP-1193), or pay from an x402 client.', 'bad')
    return
  }
  say('')
  button.dataset.payLabel = button.textContent
  button.disabled = false
  button.onclick = () => pay(data)
  void chooseWalletNetwork(data)
}

/** The wallet the session cookie stands for, as its readable companion names it (it grants nothing itself). */
function signedInAs() {
  const pair = document.cookie.split('; ').find((c) => c.startsWith('trellis_wallet='))
  const address = pair && decodeURIComponent(pair.slice('trellis_wallet='.length))
  return address && /^0x[0-9a-fA-F]{40}$/.test(address) ? address : null
}

/**
 * Opens a session at `path` (the reading session, or the studio's): the wallet signs the EIP-4361 message of a fresh
 * nonce, and the server opens the session with that signature.
 */
async function openSession(path) {
  const provider = wallet()
  if (!provider) throw new Error('no wallet found in this browser (install a wallet extension)')
  const [address] = await provider.request({ method: 'eth_requestAccounts' })
  const issued = await fetch('/v1/auth/nonce', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ wallet_address: address }) })
  if (!issued.ok) throw new Error(await reasonOf(issued))
  const nonce = await issued.json()
  const signature = await provider.request({ method: 'personal_sign', params: [hex(new TextEncoder().encode(nonce.siwe_message)), address] })
  const opened = await fetch(path, {
    method: 'POST',
    headers: { 'x-wallet-address': nonce.wallet_address, 'x-signature': signature, 'x-message': utf8Base64(nonce.siwe_message), 'x-timestamp': String(Math.floor(Date.now() / 1000)) },
  })
  if (!opened.ok) throw new Error(await reasonOf(opened))
  return opened
}

/** Signs in to read: opens the reading session. */
async function signIn(button) {
  button.disabled = true
  try {
    await openSession('/v1/auth/session')
    location.reload()
  } catch (error) {
    button.disabled = false
    button.title = `Not signed in: ${error?.message ?? error}`
    button.textContent = 'Sign in failed: try again'
  }
}

async function signOut() {
  await fetch('/v1/auth/session', { method: 'DELETE' })
  location.reload()
}

function startAccount() {
  const place = $('account')
  const button = $('sign-in')
  if (!place || !button) return
  const address = signedInAs()
  if (address) {
    const who = document.createElement('span')
    who.className = 'who'
    who.id = 'signed-in'
    who.textContent = `Signed in as ${address.slice(0, 6)}…${address.slice(-4)}`
    who.title = address
    const out = document.createElement('button')
    out.type = 'button'
    out.id = 'sign-out'
    out.textContent = 'Sign out'
    out.addEventListener('click', signOut)
    place.replaceChildren(who, out)
  } else if (wallet()) {
    for (const offered of [button, $('paywall-sign-in')].filter(Boolean)) {
      offered.hidden = false
      offered.addEventListener('click', () => signIn(offered))
    }
  }
}

// What the studio's script (studio.js) shares with this one.
window.trellis = { openSession, reasonOf }

document.addEventListener('DOMContentLoaded', () => {
  startAccount()
  const data = pageData()
  if (data?.kind === 'paywall') startPaywall(data)
  startEntry()
})
