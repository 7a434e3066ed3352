// The frame every page shares, and the headers that go with it: a strict Content-Security-Policy (our own script and
// style only, nothing fetched from elsewhere), so even markup that slipped through escaping could not run.
import { html, json, type Html } from './html.ts'

export const ASSET_PATH = '/assets'

/**
 * Scripts and styles from this server only; images and media from here (or made in the page from paid bytes);
 * the page may call only this server; no plugins, no framing, no <base>, forms post here.
 */
export const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "media-src 'self' blob:",
  "connect-src 'self'",
  "frame-src 'self' blob:",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ')

export const PAGE_HEADERS: Record<string, string> = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': PAGE_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'cache-control': 'no-cache',
  vary: 'Accept, Cookie',
}

/** How a page is shown when it is shared (OpenGraph, Twitter cards): paths, made absolute by the frame's origin. */
export interface Card {
  type: 'website' | 'article' | 'profile'
  path: string
  description?: string
  /** The picture (a feed's cover), when there is one. */
  image?: string
}

/** A feed a reader's app can follow from this page (RSS, Atom, JSON Feed autodiscovery). */
export interface Alternate {
  type: string
  href: string
  title: string
}

export interface Frame {
  title: string
  /** The public origin (TRELLIS_PUBLIC_URL), for what must be absolute: a shared card's URL and picture. */
  origin?: string
  card?: Card
  alternates?: Alternate[]
  /** What the server settles on, shown on every page. */
  network: string
  description?: string
  /** Data for the page's script (read from <script type="application/json" id="trellis-data">). */
  data?: unknown
  /** The asset names' versions, so a new binary's script is never taken from a cache of the old one. */
  assetVersion: string
  /** Scripts and styles of this page only, by asset name (the studio's). */
  extraAssets?: readonly string[]
}

const extraAsset = (name: string, version: string): Html =>
  name.endsWith('.css')
    ? html`<link rel="stylesheet" href="${ASSET_PATH}/${name}?v=${version}">\n`
    : html`<script src="${ASSET_PATH}/${name}?v=${version}" defer></script>\n`

type Told = [key: string, value: string | undefined]

/** `<meta>` tags, one a line, as `prefix:key` in `attribute`; those without a value are left out. */
const metas = (attribute: 'property' | 'name', prefix: string, told: Told[]): Html[] =>
  told.flatMap(([key, value]) => (value === undefined ? [] : [html`<meta ${attribute}="${prefix}:${key}" content="${value}">\n`]))

function shareCard(title: string, origin: string, card: Card): Html {
  const image = card.image ? `${origin}${card.image}` : undefined
  /** What the card tells: under OpenGraph's names, and all but the URL under Twitter's too. */
  const told: Told[] = [
    ['title', title],
    ['url', `${origin}${card.path}`],
    ['description', card.description || undefined],
    ['image', image],
  ]
  const og = metas('property', 'og', [['site_name', 'Trellis'], ['type', card.type], ...told])
  const twitter = metas('name', 'twitter', [['card', image ? 'summary_large_image' : 'summary'], ...told.filter(([key]) => key !== 'url')])
  return html`${og}${twitter}`
}

export function page(frame: Frame, main: Html): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${frame.title} · Trellis</title>
${frame.description ? html`<meta name="description" content="${frame.description}">` : ''}
<link rel="icon" href="${ASSET_PATH}/favicon.svg?v=${frame.assetVersion}" type="image/svg+xml">
${(frame.alternates ?? []).map(
  (a) => html`<link rel="alternate" type="${a.type}" href="${a.href}" title="${a.title}">
`,
)}${
  frame.card && frame.origin !== undefined ? shareCard(frame.title, frame.origin, frame.card) : ''
}<link rel="stylesheet" href="${ASSET_PATH}/trellis.css?v=${frame.assetVersion}">
<script src="${ASSET_PATH}/content.js?v=${frame.assetVersion}" defer></script>
<script src="${ASSET_PATH}/trellis.js?v=${frame.assetVersion}" defer></script>
${(frame.extraAssets ?? []).map((name) => extraAsset(name, frame.assetVersion))}</head>
<body>
<header class="top">
  <a class="brand" href="/">Trellis</a>
  <nav aria-label="Site"><a href="/feeds">Feeds</a><a href="/leaderboards">Leaderboards</a><a href="/studio">Studio</a>
<a href="/v1/docs">API</a></nav>
  <form class="search" action="/search" method="get" role="search">
    <label for="search-q" class="visually-hidden">Search feeds and entries</label>
    <input id="search-q" name="q" type="search" maxlength="200" placeholder="Search feeds and entries" required>
  </form>
  <span class="network" title="payments settle on this network">${frame.network}</span>
  <span class="account" id="account"><button type="button" class="sign-in" id="sign-in" hidden>Sign in with wallet</button></span>
</header>
<main>
${main}
</main>
<footer>Trellis · paid entries in USDC over HTTP 402 (x402) · <a href="/v1/openapi.json">OpenAPI</a></footer>
${frame.data === undefined ? '' : html`<script type="application/json" id="trellis-data">${json(frame.data)}</script>`}
</body>
</html>
`.text
}
