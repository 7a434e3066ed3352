// The studio's charts, drawn here as inline SVG (no script, no library, nothing fetched): revenue over time, sales
// by entry, new against returning buyers, and conversion (sales per 402 challenge). Each is an image with a name and a
// description for a screen reader, a <title> on every mark for a pointer, and the same figures as a table beside it.
import type { Analytics } from '../../models/analytics.ts'
import { html, type Html } from '../html.ts'
import { count, day, usdc } from '../format.ts'

const WIDTH = 640
const HEIGHT = 200
const PAD = { left: 8, right: 8, top: 24, bottom: 30 }

/** A share of the largest, 0..1 (money as bigint: a chart needs no more than a float's precision). */
const share = (value: bigint | number, largest: bigint | number): number => (Number(largest) > 0 ? Number(value) / Number(largest) : 0)

const round = (n: number) => Math.round(n * 10) / 10

const percent = (part: number, whole: number) => (whole > 0 ? `${((part / whole) * 100).toFixed(1)}%` : '—')

function figure(id: string, title: string, summary: string, svg: Html, table: Html): Html {
  return html`<figure class="chart" id="${id}">
<figcaption><h3>${title}</h3><p class="muted">${summary}</p></figcaption>
${svg}
<details><summary>${title} as a table</summary>${table}</details>
</figure>`
}

function svgFrame(id: string, label: string, marks: Html, height = HEIGHT): Html {
  return html`<svg class="plot" viewBox="0 0 ${WIDTH} ${height}" role="img" aria-labelledby="${id}-label"
 preserveAspectRatio="xMidYMid meet"><title id="${id}-label">${label}</title>${marks}</svg>`
}

/** Revenue per bucket as bars, the dates of the first and last bucket under them. */
function revenueChart(a: Analytics): Html {
  const points = a.series
  const largest = points.reduce((m, p) => (BigInt(p.revenue) > m ? BigInt(p.revenue) : m), 0n)
  const slot = (WIDTH - PAD.left - PAD.right) / Math.max(points.length, 1)
  const plotHeight = HEIGHT - PAD.top - PAD.bottom
  const bars = points.map((p, i) => {
    const h = Math.max(share(BigInt(p.revenue), largest) * plotHeight, BigInt(p.revenue) > 0n ? 2 : 0)
    const x = PAD.left + i * slot + slot * 0.1
    const y = round(HEIGHT - PAD.bottom - h)
    return html`<rect class="bar" x="${round(x)}" y="${y}" width="${round(slot * 0.8)}" height="${round(h)}"><title>${day(
      p.start,
    )}: ${usdc(p.revenue)}, ${count(p.sales)} sales</title></rect>`
  })
  const axis = html`<line class="axis" x1="${PAD.left}" y1="${HEIGHT - PAD.bottom}" x2="${WIDTH - PAD.right}" y2="${HEIGHT - PAD.bottom}"/>`
  const ends =
    points.length > 0
      ? html`<text class="tick" x="${PAD.left}" y="${HEIGHT - 4}">${day(points[0]!.start)}</text><text class="tick end" x="${
          WIDTH - PAD.right
        }" y="${HEIGHT - 4}">${day(points.at(-1)!.start)}</text>
<text class="tick" x="${PAD.left}" y="${PAD.top - 6}">${usdc(largest)}</text>`
      : ''
  const rows = points.map(
    (p) => html`<tr><td>${day(p.start)}</td><td class="num">${usdc(p.revenue)}</td><td class="num">${count(p.sales)}</td></tr>`,
  )
  return figure(
    'chart-revenue',
    'Revenue over time',
    `${usdc(a.totals.revenue)} from ${count(a.totals.sales)} sales, by ${a.interval}`,
    svgFrame('chart-revenue-svg', `Revenue per ${a.interval}: ${usdc(a.totals.revenue)} in all`, html`${axis}${bars}${ends}`),
    html`<table tabindex="0"><thead><tr><th>${a.interval}</th><th class="num">Revenue</th><th class="num">Sales</th></tr></thead>
<tbody>${rows}</tbody></table>`,
  )
}

/** The best-selling entries, one bar each, longest for the most revenue. */
function entriesChart(a: Analytics): Html {
  const top = a.top_entries.slice(0, 8)
  const largest = top.reduce((m, e) => (BigInt(e.revenue) > m ? BigInt(e.revenue) : m), 0n)
  const row = 36
  const height = Math.max(top.length * row + 8, 44)
  const bars = top.map((e, i) => {
    const y = 4 + i * row
    const w = Math.max(share(BigInt(e.revenue), largest) * (WIDTH - 300), e.sales > 0 ? 2 : 0)
    const name = e.title ?? 'Untitled'
    return html`<text class="label" x="0" y="${y + 23}">${name.length > 20 ? `${name.slice(0, 19)}…` : name}</text>
<rect class="bar" x="220" y="${y + 6}" width="${round(
      w,
    )}" height="24"><title>${name}: ${count(e.sales)} sales, ${usdc(e.revenue)}</title></rect>
<text class="value" x="${round(228 + w)}" y="${y + 23}">${count(e.sales)}</text>`
  })
  const rows = top.map(
    (e) =>
      html`<tr><td>${e.title ?? 'Untitled'}</td><td class="num">${count(e.sales)}</td><td class="num">${usdc(e.revenue)}</td>
<td class="num">${count(e.challenges)}</td></tr>`,
  )
  return figure(
    'chart-entries',
    'Sales by entry',
    top.length ? `${count(a.totals.entry_sales)} entry sales, ${count(a.totals.pass_sales)} passes` : 'No entry sold in this range yet.',
    svgFrame('chart-entries-svg', `Sales of your ${top.length} best-selling entries`, html`${bars}`, height),
    html`<table tabindex="0"><thead><tr><th>Entry</th><th class="num">Sales</th><th class="num">Revenue</th><th class="num">402s</th>
</tr></thead><tbody>${rows}</tbody></table>`,
  )
}

/** One-time against returning buyers, as a ring. */
function buyersChart(a: Analytics): Html {
  const returning = a.totals.repeat_buyers
  const once = a.totals.unique_buyers - returning
  const ring = 2 * Math.PI * 60
  const returningArc = round(share(returning, a.totals.unique_buyers) * ring)
  const marks = html`<g transform="translate(100 100)"><circle class="ring once" r="60"><title>${count(once)} bought once</title></circle>${
    returning > 0
      ? html`<circle class="ring returning" r="60" stroke-dasharray="${returningArc} ${round(ring)}" transform="rotate(-90)"><title>${count(
          returning,
        )} came back</title></circle>`
      : ''
  }<text class="centre" text-anchor="middle" y="6">${count(a.totals.unique_buyers)}</text></g>
<g class="legend"><rect class="key once" x="210" y="66" width="18" height="18"/><text x="238" y="82">New: ${count(once)} bought once</text>
<rect class="key returning" x="210" y="106" width="18" height="18"/>
<text x="238" y="122">Returning: ${count(returning)} bought again</text></g>`
  return figure(
    'chart-buyers',
    'New and returning buyers',
    `${count(a.totals.unique_buyers)} buyers, ${percent(returning, a.totals.unique_buyers)} came back`,
    svgFrame('chart-buyers-svg', `${count(once)} new buyers, ${count(returning)} returning`, marks),
    html`<table tabindex="0"><tbody><tr><th>New (one purchase)</th><td class="num">${count(once)}</td></tr><tr>
<th>Returning (two or more)</th><td class="num">${count(returning)}</td></tr></tbody></table>`,
  )
}

/** Sales per 402 challenge in each bucket, as a line; the whole range's rate in the caption. */
function conversionChart(a: Analytics): Html {
  const points = a.series
  const rates = points.map((p) => (p.challenges > 0 ? Math.min(p.sales / p.challenges, 1) : 0))
  const slot = (WIDTH - PAD.left - PAD.right) / Math.max(points.length - 1, 1)
  const plotHeight = HEIGHT - PAD.top - PAD.bottom
  const xy = rates.map((r, i) => `${round(PAD.left + i * slot)},${round(HEIGHT - PAD.bottom - r * plotHeight)}`)
  const dots = points.map(
    (p, i) =>
      html`<circle class="dot" cx="${round(PAD.left + i * slot)}" cy="${round(HEIGHT - PAD.bottom - rates[i]! * plotHeight)}" r="3">
<title>${day(p.start)}: ${count(p.sales)} sales of ${count(p.challenges)} challenges (${percent(p.sales, p.challenges)})</title></circle>`,
  )
  const base = HEIGHT - PAD.bottom
  const marks = html`<line class="axis" x1="${PAD.left}" y1="${base}" x2="${WIDTH - PAD.right}" y2="${base}"/>${
    xy.length > 1 ? html`<polyline class="line" points="${xy.join(' ')}"/>` : ''
  }${dots}<text class="tick" x="${PAD.left}" y="${PAD.top - 6}">100%</text>`
  const rows = points.map(
    (p) =>
      html`<tr><td>${day(p.start)}</td><td class="num">${count(p.challenges)}</td><td class="num">${count(p.sales)}</td>
<td class="num">${percent(p.sales, p.challenges)}</td></tr>`,
  )
  return figure(
    'chart-conversion',
    'Conversion',
    `${percent(a.totals.sales, a.totals.challenges)} of ${count(a.totals.challenges)} payment requests (402) became sales`,
    svgFrame('chart-conversion-svg', `Sales per payment request, by ${a.interval}`, marks),
    html`<table tabindex="0"><thead><tr><th>${a.interval}</th><th class="num">402s</th><th class="num">Sales</th>
<th class="num">Rate</th></tr></thead><tbody>${rows}</tbody></table>`,
  )
}

/** The four charts of a wallet's analytics, with the range's totals above them. */
export function analyticsCharts(a: Analytics): Html {
  const t = a.totals
  return html`<div class="figures" id="totals">
<div><strong>${usdc(t.revenue)}</strong><span>revenue</span></div>
<div><strong>${count(t.sales)}</strong><span>sales</span></div>
<div><strong>${count(t.unique_buyers)}</strong><span>buyers</span></div>
<div><strong>${percent(t.sales, t.challenges)}</strong><span>conversion</span></div>
</div>
<div class="charts">${revenueChart(a)}${entriesChart(a)}${buyersChart(a)}${conversionChart(a)}</div>`
}
