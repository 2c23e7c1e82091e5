// flapd's page: the live board (every flip at the instant the conductor planned it, LEAD ms
// behind the wall), a compose box with the board's own preview, and the status. Data from the
// network is only ever set as text, never as markup.
'use strict';

const LEAD = 250;               // ms the page plays behind the wall: each flip arrives before its instant
const KEY = 'flapd-key';        // where the local API key is kept in this browser
const flapd = window.flapd = {
  ready: false, boards: [], glyphs: new Map(), offset: 0, clock: 0,
  log: [], settledCount: 0, latency: [], flips: 0,
};

const $ = (id) => document.getElementById(id);
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'class') e.className = v; else if (k === 'style') e.style.cssText = v; else e.setAttribute(k, v);
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c instanceof Node ? c : String(c));
  return e;
}

// --- the local API, with the key ---------------------------------------------------------------
function headers(json) {
  const h = {};
  const k = localStorage.getItem(KEY);
  if (k) h['X-Vestaboard-Local-Api-Key'] = k;
  if (json) h['Content-Type'] = 'application/json';
  return h;
}
class Unauthorized extends Error {}
async function api(method, path, body) {
  const r = await fetch(path, { method, headers: headers(body !== undefined), body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  if (r.status === 401) { askKey(text || 'Invalid API key'); throw new Unauthorized(text); }
  let json = null;
  try { json = JSON.parse(text); } catch (_) { /* not JSON */ }
  return { status: r.status, body: json, text };
}
function askKey(problem) {
  $('keyform').hidden = false;
  $('keyproblem').textContent = problem + ': enter the local API key (local_api.key in flapd.yaml).';
  setLink('off', 'key needed');
}
function setLink(state, text) { const l = $('link'); l.className = 'link ' + state; l.textContent = text; }

// --- glyphs and cells --------------------------------------------------------------------------
function glyph(board, code) {
  if (board && board.heart && code === 62) return { text: '❤', color: null };
  return flapd.glyphs.get(code) || { text: '?', color: null };
}
function half(cls, g) {
  const d = el('div', { class: cls }, el('span', {}, g.text));
  if (g.color) d.style.background = g.color;
  return d;
}
function paint(cell, g) {
  for (const h of cell.querySelectorAll('.half')) {
    h.firstChild.textContent = g.text;
    h.style.background = g.color || '';
  }
}
function makeCell(board, code) {
  const g = glyph(board, code);
  const cell = el('div', { class: 'flap', 'data-code': code }, half('half top', g), half('half bottom', g));
  cell.scheduled = code;
  // Flips of a module are numbered as they come; each half shows the newest flip that reached
  // it, so a timer that fires late (a slow page) never puts an older glyph back.
  cell.flipsSeen = cell.codeFlip = cell.topFlip = cell.bottomFlip = 0;
  return cell;
}

// The flips' 90° instants, applied in the order the conductor fired them (the order they came),
// each at its instant or, when the page is running late, as soon as it can — never out of order.
const due = [];
let pumping = null;
function pump() {
  clearTimeout(pumping);
  const now = performance.now();
  while (due.length && due[0].at <= now) due.shift().apply();
  pumping = due.length ? setTimeout(pump, due[0].at - now) : null;
}

// One flip of one module: the upper leaf (old glyph) falls to 90° by `at`, the lower leaf (new
// glyph) falls from 90° to rest after it; `at` is the flip's 90° instant on the page's clock.
function flip(b, row, col, code, at, planned, transition) {
  const board = flapd.boards[b];
  if (!board) return;
  const cell = board.cells[row * board.cols + col];
  const from = glyph(board, cell.scheduled), to = glyph(board, code);
  cell.scheduled = code;
  const n = ++cell.flipsSeen;
  const half = board.flip / 2, now = performance.now();
  const top = cell.querySelector('.half.top'), bottom = cell.querySelector('.half.bottom');
  const upper = el('div', { class: 'leaf top' }, el('span', {}, from.text));
  const lower = el('div', { class: 'leaf bottom' }, el('span', {}, to.text));
  if (from.color) upper.style.background = from.color;
  if (to.color) lower.style.background = to.color;
  cell.append(upper, lower);
  // The upper half behind the falling leaf shows the new glyph (the leaf hides it until then).
  if (n > cell.topFlip) { cell.topFlip = n; setHalf(top, to); }
  upper.animate([{ transform: 'rotateX(0deg)' }, { transform: 'rotateX(-90deg)' }],
    { duration: half, delay: at - half - now, fill: 'both' });
  lower.animate([{ transform: 'rotateX(90deg)' }, { transform: 'rotateX(0deg)' }],
    { duration: half, delay: at - now, fill: 'both' });
  due.push({ at, apply: () => {
    if (n > cell.codeFlip) { cell.codeFlip = n; cell.dataset.code = code; }
    flapd.log.push({ board: b, row, col, code, planned, transition, at: performance.now() });
  } });
  if (due.length === 1) pump();
  setTimeout(() => {
    upper.remove(); lower.remove();
    if (n > cell.bottomFlip) { cell.bottomFlip = n; setHalf(bottom, to); }
  }, Math.max(0, at + half - now));
}
function setHalf(h, g) { h.firstChild.textContent = g.text; h.style.background = g.color || ''; }

// --- the live board ----------------------------------------------------------------------------
function hello(h) {
  flapd.glyphs = new Map(h.glyphs.map(([code, text, color]) => [code, { text, color }]));
  flapd.offset = performance.now() - h.now + LEAD;
  flapd.clock = performance.now() - h.now;
  const host = $('boards');
  host.replaceChildren();
  flapd.boards = h.boards.map((b, i) => {
    const node = el('div', { class: 'board', 'data-board': i, 'data-id': b.id });
    node.style.gridTemplateColumns = `repeat(${b.cols}, auto)`;
    const board = { id: b.id, rows: b.rows, cols: b.cols, heart: b.heart, flip: b.flip_ms, node, cells: [] };
    for (let r = 0; r < b.rows; r++) for (let c = 0; c < b.cols; c++) {
      const cell = makeCell(board, b.codes[r][c]);
      board.cells.push(cell); node.append(cell);
    }
    return board;
  });
  const placed = new Set();
  for (const g of h.grids) {
    const grid = el('div', { class: 'grid', 'data-grid': g.id });
    grid.style.gridTemplateColumns = `repeat(${g.boards[0].length}, auto)`;
    for (const row of g.boards) for (const i of row) { grid.append(flapd.boards[i].node); placed.add(i); }
    host.append(el('div', {}, grid, el('div', { class: 'board-id' }, g.id)));
  }
  flapd.boards.forEach((b, i) => { if (!placed.has(i)) host.append(el('div', {}, b.node, el('div', { class: 'board-id' }, b.id))); });
  flapd.local = h.local;
  size();
  if (!flapd.ready) flapd.readyAt = performance.now();
  flapd.ready = true;
  preview();
}

function flips(e) {
  const arrived = performance.now() - flapd.clock;  // on the conductor's clock
  for (const [b, row, col, code, planned, actual, transition] of e.flips) {
    flip(b, row, col, code, planned + flapd.offset, planned, transition);
    if (flapd.latency.length < 20000) flapd.latency.push(arrived - actual);
    flapd.flips++;
  }
}

// A board settled: once the page has played up to it, every module shows the settled frame.
function settled(e) {
  const board = flapd.boards[e.board];
  if (!board) return;
  const seen = board.cells.map((cell) => cell.flipsSeen);
  setTimeout(() => {
    // Every module, both halves: whatever a late timer left, the wall shows this frame. Flips
    // that came before it may not paint over it; flips of a later transition still do.
    e.codes.forEach((line, r) => line.forEach((code, c) => {
      const i = r * board.cols + c, cell = board.cells[i];
      if (cell.flipsSeen !== seen[i]) return;  // a later transition moves it: its settle will come
      cell.dataset.code = code; cell.scheduled = code;
      cell.codeFlip = cell.topFlip = cell.bottomFlip = cell.flipsSeen;
      paint(cell, glyph(board, code));
    }));
    flapd.settledCount++;
  }, LEAD + board.flip);
}

function handle(block) {
  let name = 'message', data = '';
  for (const line of block.split('\n')) {
    if (line.startsWith('event: ')) name = line.slice(7);
    else if (line.startsWith('data: ')) data += line.slice(6);
  }
  if (!data) return;
  const e = JSON.parse(data);
  if (name === 'hello') hello(e); else if (name === 'flips') flips(e); else if (name === 'settled') settled(e);
}

async function watch() {
  for (;;) {
    try {
      const r = await fetch('/events', { headers: headers(false) });
      if (r.status === 401) { askKey(await r.text()); return; }
      if (!r.ok) throw new Error('HTTP ' + r.status);
      setLink('on', 'live');
      const reader = r.body.getReader(), decoder = new TextDecoder();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let i;
        while ((i = buffer.indexOf('\n\n')) >= 0) { handle(buffer.slice(0, i)); buffer = buffer.slice(i + 2); }
      }
    } catch (_) { /* reconnect below */ }
    setLink('off', 'reconnecting…');
    await new Promise((done) => setTimeout(done, 2000));
  }
}

// Module size: as large as the width (and, shown alone, the height) takes.
function size() {
  const alone = document.body.classList.contains('display');
  const cols = Math.max(...flapd.boards.map((b) => b.cols), 1), rows = Math.max(...flapd.boards.map((b) => b.rows), 1);
  const across = flapd.boards.length > 1 ? flapd.boards.reduce((n, b) => n + b.cols, 0) : cols;
  const byWidth = (alone ? 94 : 90) / (across * 1.08);
  const byHeight = alone ? (94 * window.innerHeight / window.innerWidth) / (rows * 1.45) : 4.2;
  document.documentElement.style.setProperty('--cell', Math.min(byWidth, byHeight).toFixed(3) + 'vw');
}

// --- compose -----------------------------------------------------------------------------------
function message() {
  const m = { text: $('text').value };
  if ($('transition').value) m.transition = $('transition').value;
  if ($('speed').value) m.speed = $('speed').value;
  if ($('forced').checked) m.forced = true;
  return m;
}
let previewTimer = null;
function preview() { clearTimeout(previewTimer); previewTimer = setTimeout(showPreview, 150); }
async function showPreview() {
  const notes = $('previewnotes'), grid = $('preview');
  if (!$('text').value.trim()) { grid.replaceChildren(); notes.replaceChildren(); grid.dataset.codes = '[]'; return; }
  let r;
  try { r = await api('POST', '/local-api/preview', { text: $('text').value }); } catch (_) { return; }
  if (r.status !== 200) { notes.replaceChildren(el('li', { class: 'problem' }, (r.body && r.body.error) || r.text)); return; }
  const board = flapd.boards.find((b) => b.id === flapd.local.board) || flapd.boards[0];
  grid.style.gridTemplateColumns = `repeat(${r.body.cols}, auto)`;
  grid.replaceChildren(...r.body.message.flat().map((code) => {
    const g = glyph(board, code);
    return el('div', { 'data-code': code, style: g.color ? `background:${g.color}` : '' }, g.text);
  }));
  grid.dataset.codes = JSON.stringify(r.body.message);
  notes.replaceChildren(
    ...r.body.cut.map((line) => el('li', { class: 'cut' }, 'Cut (does not fit): ' + line)),
    ...r.body.substitutions.map((s) => el('li', { class: 'substitution' }, 'Substituted: ' + s)));
}
async function send(event) {
  event.preventDefault();
  let r;
  try { r = await api('POST', '/local-api/message', message()); } catch (_) { return; }
  const b = r.body || {};
  $('sent').textContent = r.status === 201 ? `Sent: transition ${b.transition}, ${b.flips} flips.`
    : r.status === 202 ? `Kept: ${b.note || b.held || ''}` : `Refused (${r.status}): ${b.error || r.text}`;
  $('sent').dataset.status = r.status;
}

// --- status ------------------------------------------------------------------------------------
const when = (t) => (t === null || t === undefined) ? '' : new Date(t * 1000).toLocaleString();
function table(head, rows) {
  return el('table', {}, el('tr', {}, ...head.map((h) => el('th', {}, h))), ...rows.map((r) => el('tr', {}, ...r.map((c) => el('td', {}, c)))));
}
function histogram(title, edges, counts) {
  const w = 52, h = 90, max = Math.max(...counts, 1);
  const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  svg.setAttribute('width', counts.length * w + 10); svg.setAttribute('height', h + 30);
  svg.setAttribute('class', 'histogram'); svg.setAttribute('data-title', title);
  counts.forEach((n, i) => {
    const bar = document.createElementNS(svg.namespaceURI, 'rect');
    const bh = n === 0 ? 0 : Math.max(2, Math.round(h * Math.log1p(n) / Math.log1p(max)));
    bar.setAttribute('x', i * w + 4); bar.setAttribute('y', h - bh); bar.setAttribute('width', w - 6); bar.setAttribute('height', bh);
    const tip = document.createElementNS(svg.namespaceURI, 'title'); tip.textContent = `${n}`; bar.append(tip);
    const label = document.createElementNS(svg.namespaceURI, 'text');
    label.setAttribute('x', i * w + w / 2); label.setAttribute('y', h + 14); label.setAttribute('text-anchor', 'middle');
    label.textContent = i < edges.length ? '< ' + (edges[i] >= 1000 ? edges[i] / 1000 + ' ms' : edges[i] + ' µs') : '≥ ' + edges[edges.length - 1] / 1000 + ' ms';
    svg.append(bar, label);
  });
  return el('figure', {}, svg, el('figcaption', {}, title + ' (log scale; hover for counts)'));
}
function modules(b) {
  const grid = el('div', { class: 'modules', 'data-board': b.id });
  grid.style.gridTemplateColumns = `repeat(${b.cols}, auto)`;
  for (let r = 0; r < b.rows; r++) for (let c = 0; c < b.cols; c++) {
    const i = r * b.cols + c;
    const m = (b.modules.reported && b.modules.reported[i]) || {};
    const state = m.state || 'normal';
    const n = b.flips ? b.flips[r][c] : 0;
    const magnet = m.magnet_errors && m.magnet_errors.length
      ? `; magnet ${m.magnet_error} steps at the last pass, worst ${m.worst_magnet_error} of ${m.magnet_errors.length}` : '';
    grid.append(el('div', { class: 'state-' + state, title: `row ${r + 1}, column ${c + 1}: ${state}, ${n} flips${magnet}` },
      n > 999 ? Math.round(n / 1000) + 'k' : n, sparkline(m.magnet_errors)));
  }
  return grid;
}
// A module's magnet errors, oldest first, as a line about zero (±4 steps fill the height; more is clipped).
function sparkline(errors) {
  if (!errors || errors.length < 1) return null;
  const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  svg.setAttribute('viewBox', '0 0 32 8'); svg.setAttribute('class', 'spark');
  const line = document.createElementNS(svg.namespaceURI, 'polyline');
  const points = errors.length === 1 ? [errors[0], errors[0]] : errors;  // one pass: a level line
  line.setAttribute('points', points.map((e, k) => `${k * 32 / (points.length - 1)},${4 - Math.max(-4, Math.min(4, e))}`).join(' '));
  svg.append(line);
  return svg;
}
async function status() {
  let r;
  try { r = await api('GET', '/status'); } catch (_) { return; }
  if (r.status !== 200 || !r.body) return;
  const s = r.body, edges = s.lateness_bins_us || [];
  const q = s.quiet;
  $('quietstate').textContent = !q ? 'no quiet hours configured' :
    (q.active ? 'quiet now' + (q.until ? ' until ' + when(q.until) : '') : 'not quiet') + (q.switched === undefined ? ' (by the clock)' : ' (switched by hand)');
  const parts = [
    el('h2', {}, 'Boards'),
    table(['board', 'size', 'output', 'moving', 'modules ok', 'faulty'], s.boards.map((b) => [b.id, `${b.rows} × ${b.cols}`, b.output, b.moving ? 'yes' : 'no', b.modules.ok, b.modules.faulty])),
    ...s.boards.map((b) => el('div', {}, el('h3', {}, `${b.id}: module health and flips`), modules(b))),
    el('h2', {}, 'What each zone shows'),
    table(['board', 'rows', 'columns', 'sender', 'message', 'temporary until'], (s.zones || []).map((z) => [z.board, `${z.rows[0] + 1}–${z.rows[1] + 1}`, `${z.cols[0] + 1}–${z.cols[1] + 1}`, z.sender || '—', z.id || 'nothing', when(z.until)])),
    el('h2', {}, 'Waiting'),
    (s.waiting && s.waiting.length) ? table(['message', 'sender', 'why', 'until'], s.waiting.map((w) => [w.id, w.sender, w.reason, when(w.until)])) : el('p', { class: 'notes' }, 'No message waits.'),
    el('h2', {}, 'Message API and sound'),
    table(['message API', 'connected', 'senders', 'held', 'last problem'], [[s.message_api.configured ? 'configured' : 'not configured', s.message_api.connected ? 'yes' : 'no', s.message_api.senders ?? '', s.message_api.held ?? '', s.message_api.last_problem || '']]),
    s.sound ? table(['clacks', 'late', 'dropped', 'underruns'], [[s.sound.clacks, s.sound.late, s.sound.dropped, s.sound.underruns]]) : el('p', { class: 'notes' }, 'Sound is off.'),
    el('h2', {}, 'Timing'),
    el('p', {}, `${s.conductor.flips} flips fired; lateness p50 ${s.conductor.lateness_p50_us} µs, p99 ${s.conductor.lateness_p99_us} µs, max ${s.conductor.lateness_max_us} µs.`),
    histogram('conductor lateness', edges, s.conductor.lateness_bins || []),
    ...s.boards.filter((b) => b.modules.gpio && b.modules.gpio.step_lateness_bins).map((b) => histogram(`${b.id}: step-edge lateness`, edges, b.modules.gpio.step_lateness_bins)),
    el('p', { class: 'notes' }, `up ${Math.round(s.uptime_s)} s · flapd ${s.versions.flapd}`),
  ];
  $('status').replaceChildren(...parts);
  $('status').dataset.loaded = Date.now();
}
async function action(what, path, body) {
  let r;
  try { r = await api('POST', path, body); } catch (_) { return; }
  $('action').textContent = `${what}: ${r.status} ${r.body && r.body.error ? r.body.error : ''}`;
  status();
}

// --- saved boards --------------------------------------------------------------------------------
async function savedList() {
  let r;
  try { r = await api('GET', '/saved'); } catch (_) { return; }
  if (r.status !== 200 || !r.body) return;
  const items = r.body.saved.map((s) => el('li', { 'data-name': s.name },
    el('span', { class: 'name' }, s.name), ` ${s.rows} × ${s.cols}, saved ${when(s.saved_at)} `,
    el('button', { type: 'button', class: 'restore' }, 'Restore'), ' ', el('button', { type: 'button', class: 'delete' }, 'Delete')));
  $('savedlist').replaceChildren(...items);
  $('savedlist').dataset.names = JSON.stringify(r.body.saved.map((s) => s.name));
}
async function savedAction(what, method, path, body) {
  let r;
  try { r = await api(method, path, body); } catch (_) { return; }
  $('savednote').textContent = `${what}: ${r.status < 300 ? 'done' : (r.body && r.body.error) || r.status}`;
  $('savednote').dataset.status = r.status;
  savedList();
}
$('saveform').addEventListener('submit', (e) => {
  e.preventDefault();
  const name = $('savename').value.trim();
  savedAction(`Save ${name}`, 'POST', '/saved', { name });
});
$('savedlist').addEventListener('click', (e) => {
  const li = e.target.closest('li'), name = li && li.dataset.name;
  if (!name || e.target.tagName !== 'BUTTON') return;
  const path = '/saved/' + encodeURIComponent(name);
  if (e.target.classList.contains('restore')) savedAction(`Restore ${name}`, 'POST', path + '/restore', {});
  else savedAction(`Delete ${name}`, 'DELETE', path);
});

// --- views -------------------------------------------------------------------------------------
function route() {
  const view = ['#status', '#calibrate'].includes(location.hash) ? location.hash.slice(1) : 'board';
  for (const v of ['board', 'status', 'calibrate']) {
    $(v + '-view').hidden = v !== view;
    $('nav-' + v).classList.toggle('here', v === view);
  }
  if (view === 'status') status();
  if (view === 'calibrate' && typeof calibration !== 'undefined') calibration.show();  // calibrate.js loads after
}
function display(on) { document.body.classList.toggle('display', on); size(); }

window.addEventListener('hashchange', route);
window.addEventListener('resize', size);
document.addEventListener('fullscreenchange', () => display(!!document.fullscreenElement || new URLSearchParams(location.search).has('display')));
$('fullscreen').addEventListener('click', () => document.documentElement.requestFullscreen().catch(() => display(true)));
$('keyform').addEventListener('submit', (e) => {
  e.preventDefault();
  localStorage.setItem(KEY, $('key').value);
  $('keyform').hidden = true;
  watch(); route(); savedList();
});
$('text').addEventListener('input', preview);
$('compose').addEventListener('submit', send);
$('home').addEventListener('click', () => action('Home all', '/home'));
$('quiet-on').addEventListener('click', () => action('Quiet on', '/quiet', { quiet: true }));
$('quiet-off').addEventListener('click', () => action('Quiet off', '/quiet', { quiet: false }));
$('quiet-auto').addEventListener('click', () => action('Quiet by the clock', '/quiet', { quiet: null }));
setInterval(() => { if (location.hash === '#status' && !document.hidden) status(); }, 2000);
display(new URLSearchParams(location.search).has('display'));
route();
watch();
savedList();
