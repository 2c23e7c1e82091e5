// flaphub's sender page: sign in (a token, or a one-time link #link=CODE), friends and the size
// their boards give you, a live preview on each chosen board as the hub composes it (cut lines and
// substitutions named), send now or at an instant (unlockAt), each sent message's status as the
// hub's events tell it (sent, delivered, displayed), delete. Every text from the server or the
// user is set as text, never as HTML.
"use strict";
const $ = (id) => document.getElementById(id);
const hub = { token: localStorage.getItem("flaphub.token"), me: null, friends: [], socket: null, previewSeq: 0 };

async function api(method, path, body) {
  const headers = { "Content-Type": "application/json" };
  if (hub.token) headers.Authorization = "Bearer " + hub.token;
  const r = await fetch("/api/v1" + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  let json = null;
  try { json = text ? JSON.parse(text) : null; } catch (e) { json = { error: text }; }
  return { status: r.status, json };
}

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v; else if (k.startsWith("data-")) e.setAttribute(k, v); else e[k] = v;
  }
  for (const c of children) e.append(c);
  return e;
}

function showSignIn(problem) {
  hub.token = null; hub.me = null;
  localStorage.removeItem("flaphub.token");
  if (hub.socket) { hub.socket.onclose = null; hub.socket.close(); hub.socket = null; }
  $("app").hidden = true; $("signout").hidden = true; $("signin").hidden = false;
  $("me").textContent = "";
  $("signin-problem").textContent = problem || "";
}

async function start() {
  const link = new URLSearchParams(location.hash.slice(1)).get("link");
  if (link) {
    history.replaceState(null, "", location.pathname);  // the code is used once; keep it out of history
    const r = await api("POST", "/sessions", { link });
    if (r.status !== 201) return showSignIn(r.json && r.json.error || "sign-in failed (" + r.status + ")");
    hub.token = r.json.token;
    localStorage.setItem("flaphub.token", hub.token);
  }
  if (!hub.token) return showSignIn("");
  const me = await api("GET", "/users/me");
  if (me.status !== 200) return showSignIn(me.status === 401 ? "that token is not known here" : me.json.error);
  hub.me = me.json;
  $("me").textContent = hub.me.username;
  $("signin").hidden = true; $("app").hidden = false; $("signout").hidden = false;
  await Promise.all([loadFriends(), loadSent()]);
  listen();
}

async function loadFriends() {
  const r = await api("GET", "/friends");
  if (r.status !== 200) return;
  hub.friends = r.json.friends;
  const chosen = new Set(chosenRecipients());
  $("friends").replaceChildren(...hub.friends.map((f) => {
    const size = f.board ? `${f.board.rows} × ${f.board.cols}` + (f.board.nameLine ? ", your name on top" : "") : "size not reported";
    const box = el("input", { type: "checkbox", value: f.username, checked: chosen.has(f.username) || hub.friends.length === 1 });
    box.addEventListener("change", schedulePreview);
    return el("li", { "data-user": f.username }, el("label", {}, box, " " + (f.displayName || f.username) + " ", el("span", { class: "dim size" }, size)));
  }));
  schedulePreview();
}

function chosenRecipients() {
  return [...document.querySelectorAll("#friends input:checked")].map((b) => b.value);
}

function unlockAt() {
  const v = $("unlock").value;
  if (!v) return null;
  const t = new Date(v).getTime();
  return Number.isFinite(t) ? t / 1000 : null;
}

let previewTimer = null;
function schedulePreview() {
  clearTimeout(previewTimer);
  previewTimer = setTimeout(preview, 150);
}

async function preview() {
  const recipients = chosenRecipients();
  const seq = ++hub.previewSeq;
  if (!recipients.length || !$("content").value) { $("previews").replaceChildren(); $("previews").dataset.seq = seq; return; }
  const r = await api("POST", "/messages/preview", { recipients, content: $("content").value, contentType: $("type").value });
  if (seq !== hub.previewSeq) return;  // a newer preview is on its way
  if (r.status !== 200) {
    $("previews").replaceChildren(el("p", { class: "problem" }, r.json.error));
  } else {
    $("previews").replaceChildren(...r.json.previews.map(drawPreview));
  }
  $("previews").dataset.seq = seq;
  $("previews").dataset.content = $("content").value;
}

function drawPreview(p) {
  const box = el("div", { class: "preview", "data-recipient": p.recipient });
  const size = p.rows ? ` — ${p.rows} × ${p.cols}` + (p.reported ? "" : " (not reported; flapd's default assumed)") : "";
  box.append(el("h3", {}, p.recipient + size));
  if (p.problem) { box.append(el("p", { class: "problem" }, p.problem)); }
  if (p.rows) {
    const grid = el("div", { class: "grid" });
    grid.style.gridTemplateColumns = `repeat(${p.cols}, auto)`;
    for (const row of p.cells) for (const cell of row) {
      const chip = /^\{(\d+)\}$/.exec(cell);
      grid.append(el("div", chip ? { class: "chip-" + chip[1] } : {}, chip ? "" : cell));
    }
    box.append(grid);
  }
  for (const line of p.cut) box.append(el("p", { class: "cut" }, "Cut (does not fit): " + line));
  for (const s of p.substitutions) box.append(el("p", { class: "subst" }, "Shown instead: " + s));
  return box;
}

async function send(event) {
  event.preventDefault();
  const body = { recipients: chosenRecipients(), content: $("content").value, contentType: $("type").value };
  const at = unlockAt();
  if (at !== null) body.unlockAt = at;
  const r = await api("POST", "/messages", body);
  const result = $("send-result");
  result.dataset.status = r.status;
  if (r.status === 201) {
    const lines = r.json.results.map((x) => x.status === "sent" ? `sent to ${x.recipient}` : `${x.recipient}: ${x.error}`);
    result.textContent = lines.join("; ");
  } else {
    result.textContent = r.json.error + (r.json.results ? ": " + r.json.results.map((x) => `${x.recipient}: ${x.error}`).join("; ") : "");
  }
  await loadSent();
}

// sent (the hub has it), delivered (a device of the recipient has it), displayed (on the wall);
// a message held for later is "scheduled" until its instant, whether or not the board holds it yet.
function statusOf(m) {
  if (m.status === "displayed") return "displayed";
  if (m.unlockAt && m.unlockAt * 1000 > Date.now()) return "scheduled";
  return m.status === "delivered" ? "delivered" : "sent";
}

async function loadSent() {
  const token = hub.token;
  const r = await api("GET", "/messages/sent");
  // Signed out (or in as someone else) while it was asked: its answer is not for this page.
  if (hub.token !== token) return;
  if (r.status === 401) return showSignIn("your session has ended; sign in again");
  if (r.status !== 200) return;
  $("sent").replaceChildren(...r.json.messages.map(({ message: m, recipient }) => {
    const status = statusOf(m);
    const del = el("button", { type: "button", class: "delete" }, "Delete");
    del.addEventListener("click", async () => { await api("DELETE", "/messages/" + m.id); await loadSent(); });
    return el("tr", { "data-id": m.id, "data-status": status },
      el("td", {}, recipient), el("td", { class: "content" }, m.content),
      el("td", {}, new Date(m.timestamp * 1000).toLocaleString()),
      el("td", { class: "unlock", "data-unlock": m.unlockAt || "" }, m.unlockAt ? new Date(m.unlockAt * 1000).toLocaleString() : "at once"),
      el("td", { class: "status status-" + status, "data-delivery": m.status },
        status === "scheduled" && m.status === "delivered" ? "scheduled (the board has it)" : status),
      el("td", {}, del));
  }));
  $("sent").dataset.loaded = String(Date.now());
}

// The hub's events for this user: delivered, displayed, deleted, friends. Each reloads what it changes.
function listen() {
  if (hub.socket) { hub.socket.onclose = null; hub.socket.close(); }
  const ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws");
  hub.socket = ws;
  ws.onopen = () => ws.send(JSON.stringify({ type: "authenticate", token: hub.token }));
  ws.onmessage = (e) => {
    let f;
    try { f = JSON.parse(e.data); } catch (_) { return; }
    if (f.type === "authenticated") { $("live").textContent = "live"; $("live").className = "live on"; loadSent(); }
    else if (f.type.startsWith("message.")) loadSent();
    else if (f.type.startsWith("friend.")) loadFriends();
  };
  ws.onclose = () => {
    $("live").textContent = "offline"; $("live").className = "live off";
    if (hub.socket === ws && hub.token) setTimeout(listen, 2000);
  };
  // Keeps the connection and answers nothing else; a scheduled message turns "sent" at its instant.
  const keep = setInterval(() => {
    if (ws.readyState !== WebSocket.OPEN) return clearInterval(keep);
    ws.send(JSON.stringify({ type: "ping" }));
    loadSent();
  }, 15000);
}

$("tokenform").addEventListener("submit", (e) => {
  e.preventDefault();
  hub.token = $("token").value.trim();
  localStorage.setItem("flaphub.token", hub.token);
  $("token").value = "";
  start();
});
$("signout").addEventListener("click", async () => { await api("DELETE", "/sessions/current"); showSignIn("signed out"); });
$("content").addEventListener("input", schedulePreview);
$("type").addEventListener("change", schedulePreview);
$("compose").addEventListener("submit", send);
// A sign-in link opened in a tab already on this page changes only the fragment.
window.addEventListener("hashchange", () => { if (new URLSearchParams(location.hash.slice(1)).get("link")) start(); });
start();
