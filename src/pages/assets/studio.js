// Trellis Studio's forms (after trellis.js, whose openSession the page script uses): the studio's forms and buttons
// are sent to the API as the studio session, with the session's CSRF token: JSON, or a multipart upload with a progress
// bar. The API validates; what it refuses is shown next to the field it names. studio-page.js starts them.
'use strict'

const CSRF_HEADER = 'x-trellis-csrf'
const byId = (id) => document.getElementById(id)
const studioData = () => JSON.parse(byId('trellis-data')?.textContent ?? 'null')
/** The flash of a form whose answer is shown after the page is made again: {form, key, value, warning}. */
const FLASH = 'trellis-studio-flash'

/** The field an API error names: shape B's details.field, a validation's "field: reason", or the code's field. */
const CODE_FIELDS = {
  INVALID_PRICE: 'price',
  INVALID_EXPIRES_AT: 'expires_at',
  UNSUPPORTED_MIME_TYPE: 'mime_type',
  INVALID_BASE64: 'content',
  INVALID_WEBHOOK_URL: 'url',
  INVALID_USERNAME: 'username',
  USERNAME_CONFLICT: 'username',
  INVALID_PICTURE_URL: 'picture_url',
  INVALID_DURATION: 'duration_s',
  PAYLOAD_TOO_LARGE: 'content',
}

/** The message of an API error, and the field of `form` it names (null when it names none there). */
function complaint(body, status, form) {
  if (!body || typeof body !== 'object') return { field: null, message: `the server answered ${status}` }
  const details = body.details
  const named = typeof details === 'string' ? /^([a-z_]+)(?:[.:]|\s)/.exec(details)?.[1] : null
  const candidates = [details && typeof details === 'object' ? details.field : null, named, CODE_FIELDS[body.code]]
  const field = candidates.map((name) => name && String(name).split('.')[0]).find((name) => name && form?.querySelector(`[data-field="${CSS.escape(name)}"]`))
  const message = body.message ?? (typeof details === 'string' ? `${body.error}: ${details}` : body.error) ?? `HTTP ${status}`
  return { field: field ?? null, message }
}

const toUnits = (text) => {
  const match = /^(\d+)(?:\.(\d{1,6}))?$/.exec(text)
  return match ? (BigInt(match[1]) * 1000000n + BigInt((match[2] ?? '').padEnd(6, '0'))).toString() : text
}

const readDataUrl = (file) =>
  new Promise((resolve, reject) => {
    const reader = new FileReader()
    reader.onload = () => resolve(reader.result)
    reader.onerror = () => reject(reader.error)
    reader.readAsDataURL(file)
  })

/** A control's value as the API takes it; undefined to send nothing. */
async function valueOf(control, form) {
  const kind = control.dataset.kind
  const unless = control.dataset.unless && form.elements.namedItem(control.dataset.unless)
  if (unless?.checked) return undefined
  if (kind === 'flag') return control.checked
  const text = control.value.trim()
  if (kind === 'data-url') return control.files[0] ? await readDataUrl(control.files[0]) : undefined
  // Text is sent as written (a blank name is the API's to refuse); the other kinds are read without spaces around.
  if ((kind === 'text' ? control.value : text) === '') return control.dataset.empty === 'null' ? null : undefined
  if (kind === 'tags') return text.split(',').map((tag) => tag.trim()).filter(Boolean)
  if (kind === 'usdc') return { amount: toUnits(text), currency: 'USDC' }
  if (kind === 'time') {
    const seconds = Date.parse(`${text}:00Z`) / 1000
    return Number.isFinite(seconds) ? seconds : text
  }
  if (kind === 'int') return /^\d+$/.test(text) ? Number(text) : text
  if (kind === 'days') return Number.isFinite(Number(text)) ? Math.round(Number(text) * 86400) : text
  return control.value
}

/** The form's fields as the API's body: each named control (a file, Markdown and checked lists handled apart). */
async function fieldsOf(form) {
  const fields = {}
  for (const control of form.querySelectorAll('[data-kind]')) {
    const kind = control.dataset.kind
    if (kind === 'file' || kind === 'markdown') continue
    if (kind === 'list') {
      if (control.checked) (fields[control.name] ??= []).push(control.value)
      continue
    }
    const value = await valueOf(control, form)
    if (value !== undefined) fields[control.name] = value
  }
  return fields
}

/** The publish form as multipart: the content part from the file chosen (or dropped), else the Markdown written. */
function multipartOf(form, fields) {
  const parts = new FormData()
  const file = form.querySelector('[data-kind="file"]')?.files[0]
  const markdown = form.querySelector('[data-kind="markdown"]')?.value ?? ''
  if (file) parts.append('content', file, file.name)
  else if (markdown.trim() !== '') {
    parts.append('content', new Blob([markdown], { type: 'text/markdown' }), 'entry.md')
    fields.mime_type ??= 'text/markdown'
  }
  for (const [name, value] of Object.entries(fields)) {
    if (value === null) continue
    if (Array.isArray(value)) for (const item of value) parts.append(name, item)
    else parts.append(name, typeof value === 'object' ? JSON.stringify(value) : String(value))
  }
  return parts
}

/** Sends a request as the studio session; `onProgress(fraction)` follows an upload. Answers {status, body}. */
function send(method, action, body, onProgress) {
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest()
    request.open(method, action)
    request.setRequestHeader(CSRF_HEADER, studioData().csrf)
    request.setRequestHeader('accept', 'application/json')
    if (onProgress) request.upload.onprogress = (event) => event.lengthComputable && onProgress(event.loaded / event.total)
    request.onload = () => {
      let parsed = null
      try {
        parsed = request.responseText ? JSON.parse(request.responseText) : null
      } catch {}
      resolve({ status: request.status, body: parsed })
    }
    request.onerror = () => reject(new Error('no answer from the server'))
    if (body === undefined) request.send()
    else if (body instanceof FormData) request.send(body)
    else {
      request.setRequestHeader('content-type', 'application/json')
      request.send(JSON.stringify(body))
    }
  })
}

function clearComplaints(form) {
  for (const shown of form.querySelectorAll('.field-error, .form-error')) shown.hidden = true
  for (const control of form.querySelectorAll('[aria-invalid]')) control.removeAttribute('aria-invalid')
}

/** Shows the API's refusal next to the field it names, or above the form's button. */
function showComplaint(form, answer) {
  const { field, message } = complaint(answer.body, answer.status, form)
  const place = field && form.querySelector(`[data-field="${CSS.escape(field)}"]`)
  const shown = place ? place.querySelector('.field-error') : byId(`${form.id}-error`)
  shown.textContent = message
  shown.hidden = false
  const control = place?.querySelector('input, select, textarea')
  control?.setAttribute('aria-invalid', 'true')
  control?.focus()
}

/**
 * What to do with a success: reload, go to a page, or show a value of the answer (after a reload, as a flash). A
 * warning the answer carries (a price below what a sale costs to settle) is kept in the flash too, shown by the form.
 */
function afterward(how, answer, form) {
  if (how.startsWith('go:')) return location.assign(how.slice(3).replace('{id}', encodeURIComponent(answer.body?.id ?? '')))
  const key = how.startsWith('show:') ? how.slice(5) : null
  const warning = answer.body?.price_warning?.message ?? null
  if (form && (key || warning)) {
    const value = key ? String(answer.body?.[key] ?? '') : null
    sessionStorage.setItem(FLASH, JSON.stringify({ form: form.id, key, value, warning }))
  }
  location.reload()
}

async function submit(form, event) {
  event.preventDefault()
  const button = form.querySelector('button[type="submit"]')
  const status = form.querySelector('.form-status')
  clearComplaints(form)
  button.disabled = true
  status.textContent = 'Sending…'
  const progress = form.querySelector('.progress')
  try {
    const fields = await fieldsOf(form)
    const multipart = form.dataset.encode === 'multipart'
    const onProgress = multipart && progress ? (fraction) => showProgress(progress, fraction) : undefined
    if (progress) progress.hidden = !multipart
    const answer = await send(form.dataset.method, form.dataset.action, multipart ? multipartOf(form, fields) : fields, onProgress)
    if (answer.status >= 200 && answer.status < 300) {
      status.textContent = 'Saved.'
      return afterward(form.dataset.after, answer, form)
    }
    status.textContent = ''
    showComplaint(form, answer)
  } catch (error) {
    status.textContent = `Not sent: ${error?.message ?? error}`
  }
  button.disabled = false
}

function showProgress(progress, fraction) {
  const percent = Math.round(fraction * 100)
  progress.querySelector('progress').value = percent
  progress.querySelector('span').textContent = `${percent}%`
}

/** A button's one request (delete, revoke, reactivate, a test event). */
async function act(button) {
  if (button.dataset.confirm && !window.confirm(button.dataset.confirm)) return
  const status = button.parentElement.querySelector('.action-status')
  button.disabled = true
  try {
    const body = button.dataset.body === undefined ? undefined : JSON.parse(button.dataset.body)
    const answer = await send(button.dataset.method, button.dataset.action, body)
    if (answer.status >= 200 && answer.status < 300 && button.dataset.after === 'show:outcome' && status) {
      const o = answer.body
      status.textContent = o.delivered
        ? `Test event delivered: HTTP ${o.status} in ${o.duration_ms} ms`
        : `Test event not delivered: ${o.error ?? `HTTP ${o.status}`}`
      status.className = `action-status ${o.delivered ? 'good' : 'bad'}`
    } else if (answer.status >= 200 && answer.status < 300) return afterward(button.dataset.after, answer, null)
    else if (status) status.textContent = complaint(answer.body, answer.status).message
    else window.alert(complaint(answer.body, answer.status).message)
  } catch (error) {
    if (status) status.textContent = `Not sent: ${error?.message ?? error}`
  }
  button.disabled = false
}
