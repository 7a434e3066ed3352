// Webhooks in the studio: register an endpoint (its signing secret shown once), list them, send a test event, read
// an endpoint's delivery log, remove one.
import type { WebhookDeliveryRecord, WebhookEndpointRecord } from '../../models/records.ts'
import { WEBHOOK_EVENTS } from '../../models/webhook.ts'
import { html, type Html } from '../html.ts'
import { day } from '../format.ts'
import { actionButton, checkboxes, form, input } from './forms.ts'

const when = (unixSeconds: number) => new Date(unixSeconds * 1000).toISOString().replace('T', ' ').slice(0, 19)

function registerForm(): Html {
  const c = (name: string, label: string) => ({ form: 'new-webhook', name, label })
  return form(
    { id: 'new-webhook', method: 'POST', action: '/v1/webhooks', after: 'show:secret', submit: 'Register the endpoint' },
    html`${input({ ...c('url', 'Endpoint URL'), hint: 'https on the public internet (see docs/webhooks.md to try one locally)' }, 'url')}
${input({ ...c('description', 'Description'), attributes: html` maxlength="500"` })}
${checkboxes(c('events', 'Events (none checked: every event)'), WEBHOOK_EVENTS, [])}`,
  )
}

const hooks = '/v1/webhooks'
const SURE = 'Remove this endpoint? Deliveries not yet made are cancelled.'

function endpointRows(endpoints: WebhookEndpointRecord[]): Html {
  if (endpoints.length === 0) return html`<p class="empty">No endpoint yet.</p>`
  return html`<ul class="endpoints">${endpoints.map(
    (e) => html`<li class="panel endpoint" data-webhook="${e.id}"><p class="title">${e.url}</p>
<p class="muted">${e.description ?? ''} ${e.events.join(', ')} · since ${day(e.created_at)}</p>
<p class="actions">${actionButton({ label: 'Send a test event', method: 'POST', action: `${hooks}/${e.id}/test`, after: 'show:outcome' })}
<a class="button" href="/studio/webhooks?log=${e.id}">Delivery log</a>
${actionButton({ label: 'Remove', name: `Remove ${e.url}`, method: 'DELETE', action: `${hooks}/${e.id}`, after: 'reload', confirm: SURE })}
<span class="action-status" role="status"></span></p></li>`,
  )}</ul>`
}

function deliveryLog(endpoint: WebhookEndpointRecord, deliveries: WebhookDeliveryRecord[]): Html {
  return html`<section aria-labelledby="log-heading"><h2 id="log-heading">Delivery log of ${endpoint.url}</h2>${
    deliveries.length === 0
      ? html`<p class="empty">Nothing sent yet.</p>`
      : html`<table class="deliveries" tabindex="0"><thead><tr><th>When</th><th>Event</th><th>State</th><th class="num">Attempts</th>
<th>Last answer</th></tr></thead>
<tbody>${deliveries.map(
          (d) => html`<tr><td>${when(d.created_at)}</td><td>${d.event}</td><td>${d.status}</td><td class="num">${d.attempts}</td>
<td>${d.last_status ?? ''} ${d.last_error ?? ''}</td></tr>`,
        )}</tbody></table>`
  }</section>`
}

export function webhooksStudioPage(
  endpoints: WebhookEndpointRecord[],
  log: { endpoint: WebhookEndpointRecord; deliveries: WebhookDeliveryRecord[] } | null,
): Html {
  return html`<h1>Webhooks</h1>
<p class="muted">Your server is told of each sale, pass and publication as it happens, signed (Standard Webhooks).</p>
<section aria-labelledby="endpoints-heading"><h2 id="endpoints-heading">Endpoints</h2>${endpointRows(endpoints)}</section>
${log ? deliveryLog(log.endpoint, log.deliveries) : ''}
<section aria-labelledby="register-heading" class="panel"><h2 id="register-heading">Register an endpoint</h2>${registerForm()}</section>`
}

/** The profile: the name and picture buyers see. */
export function profileStudioPage(wallet: { id: string; address: string; username: string | null; picture_url: string | null }): Html {
  const c = (name: string, label: string) => ({ form: 'profile', name, label })
  return html`<h1>Profile</h1>
<section class="panel" aria-labelledby="profile-heading"><h2 id="profile-heading">How buyers see you</h2>${form(
    { id: 'profile', method: 'PATCH', action: `/v1/wallets/${wallet.id}`, after: 'reload', submit: 'Save the profile' },
    html`${input({ ...c('username', 'Username'), value: wallet.username, empty: 'null', hint: '3-50 letters and digits; unique' })}
${input({ ...c('picture_url', 'Picture URL'), value: wallet.picture_url, empty: 'null', hint: 'an http(s) address of an image' }, 'url')}`,
  )}
<p class="links"><a href="/creators/${wallet.address}">See your public page</a></p></section>`
}
