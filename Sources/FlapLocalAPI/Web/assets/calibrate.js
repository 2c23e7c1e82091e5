'use strict';
// Live calibration (issue 35): the maker picks a module, turns it on a step or a flap at a time
// and says which flap it shows; flapd saves the offset and turns the module to what the board
// should show. Everything is POST /calibration (CalibrationRoutes); keys do all of it.
const calibration = (() => {
  const st = { active: false, boards: [], sizes: {}, board: null, row: 0, col: 0, done: new Set(), steps: {} };

  function say(text) { $('cal-module').textContent = text; }

  async function post(body) {
    let r;
    try { r = await api('POST', '/calibration', body); } catch (e) {
      // Never silent: a key pressed and nothing said leaves the maker guessing.
      if (!(e instanceof Unauthorized)) say(`${body.action}: no answer from flapd (${e.message || e}); press it again`);
      return null;
    }
    if (r.body && r.body.session) session(r.body.session);
    if (r.status !== 200) { say(`${body.action}: ${r.status} ${r.body && r.body.error ? r.body.error : r.text}`); return null; }
    return r.body;
  }

  function session(s) {
    st.active = s.active; st.boards = s.boards || [];
    $('cal-toggle').textContent = s.active ? 'End calibrating' : 'Start calibrating';
    $('cal-state').textContent = s.active ? `on; ends by itself after ${s.ends_in_s} s without a request` : `off (ends by itself after ${s.idle_seconds} s idle)`;
    $('cal-state').dataset.active = s.active ? '1' : '0';
    const sel = $('cal-board');
    if (sel.options.length !== st.boards.length) sel.replaceChildren(...st.boards.map((b) => el('option', {}, b)));
    if (!st.board || !st.boards.includes(st.board)) st.board = st.boards[0] || null;
    sel.value = st.board || '';
  }

  function grid() {
    const size = st.sizes[st.board];
    const g = $('cal-grid');
    if (!size) { g.replaceChildren(); return; }
    g.style.gridTemplateColumns = `repeat(${size.cols}, auto)`;
    const cells = [];
    for (let r = 0; r < size.rows; r++) for (let c = 0; c < size.cols; c++) {
      const key = `${r},${c}`;
      const cell = el('div', { 'data-module': key, class: (st.done.has(st.board + ':' + key) ? 'done ' : '') + (r === st.row && c === st.col ? 'here' : ''),
        title: `row ${r + 1}, column ${c + 1}` }, key);
      cell.addEventListener('click', () => { pick(r, c); g.focus(); });
      cells.push(cell);
    }
    g.replaceChildren(...cells);
  }

  function pick(r, c) {
    const size = st.sizes[st.board];
    if (!size) return;
    st.row = (r + size.rows) % size.rows; st.col = (c + size.cols) % size.cols;
    grid();
    say(`module ${st.row},${st.col} of ${st.board}`);
  }

  function next() {
    const size = st.sizes[st.board];
    if (!size) return;
    const i = (st.row * size.cols + st.col + 1) % (size.rows * size.cols);
    pick(Math.floor(i / size.cols), i % size.cols);
  }

  function where(m) {
    const bits = [`module ${m.row},${m.col}`, `flap ${m.flap ?? '?'}`, `place ${m.place ?? '?'} steps from flap 0`];
    if (m.steps_from_magnet !== undefined) bits.push(`${m.steps_from_magnet} past its magnet`);
    if (m.offset !== undefined) bits.push(`offset ${m.offset}`);
    if (m.saved !== undefined) bits.push(`saved offset ${m.saved}`);
    return bits.join(', ');
  }

  async function turn(action, extra) {
    if (!st.active && !(await post({ action: 'start' }))) return;
    const r = await post(Object.assign({ action, board: st.board, row: st.row, col: st.col }, extra || {}));
    if (!r || !r.module) return;
    say(where(r.module));
    if (action === 'mark') { st.done.add(`${st.board}:${st.row},${st.col}`); grid(); }
  }

  async function mark() {
    const showing = $('cal-showing').value;
    if (showing.length !== 1) { say('type the flap the module shows (a space for the blank), then Enter'); return; }
    await turn('mark', { showing });
    $('cal-showing').value = '';
  }

  async function show() {
    let s;
    try { s = await api('GET', '/status'); } catch (_) { return; }
    if (s.status === 200 && s.body) for (const b of s.body.boards) st.sizes[b.id] = { rows: b.rows, cols: b.cols };
    let r;
    try { r = await api('GET', '/calibration'); } catch (_) { return; }
    if (r.status === 404) { $('cal-state').textContent = 'no board of stepper modules on GPIO to calibrate'; return; }
    if (r.body && r.body.session) session(r.body.session);
    grid();
  }

  function key(e) {
    if (e.target === $('cal-showing')) {
      if (e.key === 'Enter') { e.preventDefault(); mark(); }
      return;
    }
    const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
    if (moves[e.key]) { e.preventDefault(); pick(st.row + moves[e.key][0], st.col + moves[e.key][1]); return; }
    if (e.key === '+' || e.key === '=') { e.preventDefault(); turn('step', { steps: 1 }); return; }
    if (e.key === '-' || e.key === '−') { e.preventDefault(); turn('step', { steps: -1 }); return; }
    if (e.key === 'f' || e.key === 'F' || e.key === ']') { e.preventDefault(); turn('flap'); return; }
    if (e.key === 'n' || e.key === 'N') { e.preventDefault(); next(); return; }
    if (e.key === 'Enter') { e.preventDefault(); mark(); return; }
    if (e.key.length === 1 && !e.ctrlKey && !e.metaKey && !e.altKey) { e.preventDefault(); $('cal-showing').value = e.key.toUpperCase(); }
  }

  async function selftest() {
    const out = $('selftest-result');
    let r;
    try { r = await api('POST', '/selftest'); } catch (_) { return; }
    if (r.status !== 202) { out.textContent = `self-test: ${r.status} ${r.body && r.body.error ? r.body.error : r.text}`; return; }
    out.textContent = `${r.body.turning} modules turning…`;
    for (;;) {
      await new Promise((done) => setTimeout(done, 500));
      try { r = await api('GET', '/selftest'); } catch (_) { return; }
      if (r.status === 200 && r.body && !r.body.running) break;
    }
    const all = r.body.modules, unwell = all.filter((m) => m.verdict !== 'ok');
    const late = all.some((m) => m.seconds > m.planned_seconds * 1.25)
      ? el('p', { id: 'selftest-late' }, `The turns ended up to ${r.body.late_seconds} s later than planned: flapd's step thread waited for a core (a busy Pi) or a chain is slower than its pulses — not a module's fault.`) : '';
    out.replaceChildren(el('p', { id: 'selftest-summary' }, `${all.length} modules turned once round: ${all.length - unwell.length} ok`), late,
      unwell.length ? table(['board', 'module', 'seconds', 'planned', 'magnet', 'verdict'],
        unwell.map((m) => [m.board, `${m.row},${m.col}`, m.seconds, m.planned_seconds, m.magnet_error ?? '—', m.verdict])) : '');
  }

  $('selftest').addEventListener('click', selftest);
  $('cal-toggle').addEventListener('click', () => post({ action: st.active ? 'end' : 'start' }));
  $('cal-board').addEventListener('change', (e) => { st.board = e.target.value; pick(0, 0); });
  $('cal-grid').addEventListener('keydown', key);
  $('cal-showing').addEventListener('keydown', key);
  $('cal-step').addEventListener('click', () => turn('step', { steps: 1 }));
  $('cal-flap').addEventListener('click', () => turn('flap'));
  $('cal-mark').addEventListener('click', mark);
  setInterval(() => { if (location.hash === '#calibrate' && !document.hidden && st.active) show(); }, 5000);
  return { show };
})();
if (location.hash === '#calibrate') calibration.show();
