"""flapd's web page in a real browser: Debian's Chromium, headless, driven by Selenium through
Debian's chromedriver, against a running flapd. Prints one JSON object of what it saw; the test
(WebPageTests) decides. With --shots DIR it also keeps the screenshots there (the README's).

usage: web-check.py PORT KEY OUTDIR [--shots DIR]
"""
import json, shutil, sys, threading, time, urllib.request, urllib.error
from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.chromium.remote_connection import ChromiumRemoteConnection
from selenium.webdriver.remote.client_config import ClientConfig
from selenium.webdriver.remote.command import Command
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait
from PIL import Image

port, key, outdir = sys.argv[1], sys.argv[2], sys.argv[3]
shots = sys.argv[5] if len(sys.argv) > 5 and sys.argv[4] == "--shots" else None
base = f"http://127.0.0.1:{port}"
WAIT = 120  # seconds: a bound for a loaded machine, not a measure
# The bound of the page made late on purpose (5b): its main thread, throttled 6× on a machine that
# also runs QEMU guests (CI), took more than WAIT to run one script.
LATE_WAIT = 480


def http(method, path, body=None, k=key):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method, headers={"X-Vestaboard-Local-Api-Key": k, "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


options = webdriver.ChromeOptions()
options.binary_location = "/usr/bin/chromium"
for a in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1400,1000",
          "--force-device-scale-factor=1", "--no-first-run", "--disable-extensions", f"--user-data-dir={outdir}/profile"]:
    options.add_argument(a)
# chromedriver answers each command within 120 s by default; a throttled page on a machine that also
# runs QEMU guests (CI) can take longer to run one script, so the bound is the test's own (10 min).
service = Service("/usr/bin/chromedriver")
service.start()
executor = ChromiumRemoteConnection(service.service_url, "goog", "chrome",
                                    client_config=ClientConfig(service.service_url, timeout=600))
driver = webdriver.Remote(command_executor=executor, options=options)
driver.set_script_timeout(LATE_WAIT)  # a page made slow on purpose (5b) answers a script late, not never
# The status page is drawn again every 2 s: an element found may be gone when it is read, so a
# wait tries again, and what the status page says is read in one script (all at one instant).
wait = WebDriverWait(driver, WAIT, poll_frequency=0.05, ignored_exceptions=[StaleElementReferenceException])


def texts(selector):
    return driver.execute_script("return [...document.querySelectorAll(arguments[0])].map(e => e.innerText)", selector)


def click(element_id):
    driver.execute_script("document.getElementById(arguments[0]).click()", element_id)


out = {}


def raw_reader(transition_of, latencies, ready, done):
    """The baseline of the page's event latency: a plain reader of /events in this process, on
    the same CLOCK_MONOTONIC as the conductor's instants (time.monotonic on Linux)."""
    req = urllib.request.Request(base + "/events", headers={"X-Vestaboard-Local-Api-Key": key})
    with urllib.request.urlopen(req, timeout=WAIT) as r:
        name = None
        for line in r:
            line = line.decode().rstrip("\n")
            if line.startswith("event: "):
                name = line[7:]
                if name == "hello":
                    ready.set()
            elif line.startswith("data: ") and name == "flips":
                now = time.monotonic() * 1000
                latencies.extend(now - f[5] for f in json.loads(line[6:])["flips"])
            elif line.startswith("data: ") and name == "settled" and json.loads(line[6:])["transition"] == transition_of():
                done.set()
                return


def page_codes(board=0):
    return driver.execute_script(
        "const b = flapd.boards[arguments[0]]; const rows = [];"
        "for (let r = 0; r < b.rows; r++) rows.push(b.cells.slice(r * b.cols, (r + 1) * b.cols).map(c => Number(c.dataset.code)));"
        "return rows;", board)


def settled_on(expected, board=0, within=None):
    """Waits until the page shows `expected` (after its settled frame came) and returns whether it did."""
    try:
        (wait if within is None else WebDriverWait(driver, within, poll_frequency=0.05)).until(lambda d: page_codes(board) == expected)
        return True
    except Exception as e:
        out.setdefault("settle-problems", []).append(f"{type(e).__name__}: {str(e)[:300]}")
        return False


def bright(png, rect):
    """Pixels brighter than the flap's own grey in a cell's rectangle of a screenshot."""
    img = Image.open(png).convert("L")
    x, y, w, h = (int(rect[k]) for k in ("x", "y", "width", "height"))
    return sum(img.crop((x, y, x + w, y + h)).histogram()[161:])


try:
    # 1. A wrong key: the page says so and shows no board.
    driver.get(base + "/")
    driver.execute_script("localStorage.setItem('flapd-key', 'not-the-key')")
    driver.get(base + "/")
    wait.until(lambda d: d.find_element(By.ID, "keyform").is_displayed())
    out["wrong-key-problem"] = driver.find_element(By.ID, "keyproblem").text
    out["wrong-key-cells"] = len(driver.find_elements(By.CSS_SELECTOR, "#boards .flap"))

    # 2. The right key, typed into the form: the live board comes.
    driver.find_element(By.ID, "key").send_keys(key)
    driver.find_element(By.CSS_SELECTOR, "#keyform button").click()
    wait.until(lambda d: d.execute_script("return flapd.ready"))
    out["cells"] = len(driver.find_elements(By.CSS_SELECTOR, "#boards .flap"))
    out["board-before"] = page_codes() == http("GET", "/local-api/message")[1]["message"]

    # 3. A message posted to the local API: the page plays every flip, in cascade order, and ends on
    #    what GET /local-api/message returns.
    raw, raw_ready, raw_done, posted = [], threading.Event(), threading.Event(), {}
    reader = threading.Thread(target=raw_reader, args=(lambda: posted.get("transition"), raw, raw_ready, raw_done), daemon=True)
    reader.start()
    raw_ready.wait(WAIT)
    status, answer = http("POST", "/local-api/message", {"text": "HELLO FROM THE HALLWAY"})
    posted.update(answer)
    out["post"] = status
    expected = http("GET", "/local-api/message")[1]["message"]
    out["settled-matches"] = settled_on(expected)
    transition = posted["transition"]
    log = driver.execute_script("return flapd.log.filter(e => e.transition === arguments[0])", transition)
    out["flips-posted"] = posted["flips"]
    out["flips-shown"] = len(log)
    ordered = sorted(log, key=lambda e: e["at"])
    out["cascade-order"] = all(a["planned"] <= b["planned"] for a, b in zip(ordered, ordered[1:]))
    firsts = {}
    for e in ordered:
        firsts.setdefault((e["row"], e["col"]), e["planned"])
    out["modules-moved"] = len(firsts)
    out["first-flips-by-cascade"] = all(
        firsts[m] <= firsts[n] for m in firsts for n in firsts if (m[0] * 50 + m[1] * 20) < (n[0] * 50 + n[1] * 20))

    # 4. Screenshots: the board page has its letters where the board has them.
    wait.until(lambda d: not d.find_elements(By.CSS_SELECTOR, ".leaf"))  # the last flips' lower leaves have landed
    driver.save_screenshot(f"{outdir}/board.png")
    cells = driver.find_elements(By.CSS_SELECTOR, "#boards .board[data-board='0'] .flap")
    lit = [(r, c) for r, line in enumerate(expected) for c, code in enumerate(line) if code != 0]
    dark = [(r, c) for r, line in enumerate(expected) for c, code in enumerate(line) if code == 0]
    out["letters-lit"] = sum(1 for r, c in lit if bright(f"{outdir}/board.png", cells[r * 22 + c].rect) > 5)
    out["letters"] = len(lit)
    out["blanks-dark"] = sum(1 for r, c in dark if bright(f"{outdir}/board.png", cells[r * 22 + c].rect) == 0)
    out["blanks"] = len(dark)
    out["board-colours"] = len(Image.open(f"{outdir}/board.png").convert("RGB").getcolors(1 << 24) or [])

    # 5. Compose: the preview is the board's own (what the local API's preview says), with the cut
    #    lines named; send shows it.
    text = ("THE QUICK BROWN FOX JUMPS OVER THE LAZY DOG, THEN RUNS ON PAST THE HALLWAY, DOWN THE STAIRS, OUT OF "
            "THE DOOR, ACROSS THE GARDEN, OVER THE FENCE AND FAR AWAY UNTIL THE BOARD'S LAST ROW CUTS IT SHORT")
    box = driver.find_element(By.ID, "text")
    box.send_keys(text)
    wait.until(lambda d: d.find_element(By.ID, "preview").get_attribute("data-codes") not in (None, "", "[]"))
    _, preview = http("POST", "/local-api/preview", {"text": text})
    out["preview-matches"] = json.loads(driver.find_element(By.ID, "preview").get_attribute("data-codes")) == preview["message"]
    out["preview-cut-shown"] = [li.text for li in driver.find_elements(By.CSS_SELECTOR, "#previewnotes li.cut")]
    out["preview-cut"] = preview["cut"]
    driver.find_element(By.ID, "send").click()
    wait.until(lambda d: d.find_element(By.ID, "sent").get_attribute("data-status"))
    out["send-status"] = driver.find_element(By.ID, "sent").get_attribute("data-status")
    out["sent-shows-preview"] = settled_on(preview["message"])
    wait.until(lambda d: not d.find_elements(By.CSS_SELECTOR, ".leaf"))
    driver.save_screenshot(f"{outdir}/compose.png")
    # 5a. Saved boards (issue 38): save what the board shows under a name, show something else,
    #     restore it from its button (the board plays back to it), delete it.
    shown = http("GET", "/local-api/message")[1]["message"]
    names = lambda d: json.loads(d.find_element(By.ID, "savedlist").get_attribute("data-names") or "[]")
    driver.find_element(By.ID, "savename").send_keys("hallway")
    click("save")
    wait.until(lambda d: "hallway" in names(d))
    out["saved-listed"] = [li.get_attribute("data-name") for li in driver.find_elements(By.CSS_SELECTOR, "#savedlist li")]
    http("POST", "/local-api/message", {"text": "SOMETHING ELSE"})
    settled_on(http("GET", "/local-api/message")[1]["message"])
    driver.find_element(By.CSS_SELECTOR, "#savedlist li[data-name='hallway'] button.restore").click()
    wait.until(lambda d: d.find_element(By.ID, "savednote").get_attribute("data-status"))
    out["saved-restore-status"] = driver.find_element(By.ID, "savednote").get_attribute("data-status")
    out["saved-restored"] = settled_on(shown) and http("GET", "/local-api/message")[1]["message"] == shown
    driver.find_element(By.CSS_SELECTOR, "#savedlist li[data-name='hallway'] button.delete").click()
    wait.until(lambda d: names(d) == [])
    out["saved-after-delete"] = http("GET", "/saved")[1]["saved"]
    # 5b. A page that runs late (Chromium's CPU throttled 6×, messages every 0.3 s): when the board
    #     settles, every module shows one glyph on both halves, the settled one (issue 39, item 3).
    driver.execute_cdp_cmd("Emulation.setCPUThrottlingRate", {"rate": 6})
    words = ["OOOO PPPP QQQQ", "PPPP QQQQ RRRR", "QQQQ RRRR SSSS", "ROPQ SRQP OPQR"]
    for i in range(12):
        http("POST", "/local-api/message", {"text": words[i % 4] + " " + words[(i + 1) % 4], "transition": ["classic", "together", "wave"][i % 3]})
        time.sleep(0.3)
    last = http("GET", "/local-api/message")[1]["message"]
    out["late-settled"] = settled_on(last, within=LATE_WAIT)
    WebDriverWait(driver, LATE_WAIT, poll_frequency=0.05).until(lambda d: not d.find_elements(By.CSS_SELECTOR, ".leaf"))
    driver.execute_cdp_cmd("Emulation.setCPUThrottlingRate", {"rate": 1})
    out["late-mixed"] = driver.execute_script(
        "const b = flapd.boards[0], bad = [];"
        "b.cells.forEach((c, i) => { const t = c.querySelector('.half.top span').textContent,"
        " u = c.querySelector('.half.bottom span').textContent, g = glyph(b, Number(c.dataset.code)).text;"
        " if (t !== g || u !== g) bad.push([Math.floor(i / b.cols), i % b.cols, t, u, g]); });"
        "return bad;")
    # 5c. The race itself, played into the page's own handlers on its own clock: a board settles
    #     (transition 1) on a frame the page has not played (its events were dropped) while the
    #     next transition's flip of the same module comes before that settle's timer; then that
    #     transition settles. The wall shows C; the page must show C on both halves.
    out["race"] = driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        const b = flapd.boards[0], cell = b.cells[0], now = performance.now() - flapd.clock;
        const frame = (code) => Array.from({ length: b.rows }, (_, r) =>
          Array.from({ length: b.cols }, (_, c) => (r === 0 && c === 0) ? code : Number(b.cells[r * b.cols + c].dataset.code)));
        settled({ board: 0, transition: 9001, codes: frame(2) });
        flips({ flips: [[0, 0, 0, 3, now + 200, now + 200, 9002]] });
        setTimeout(() => settled({ board: 0, transition: 9002, codes: frame(3) }), 600);
        setTimeout(() => done([cell.querySelector('.half.top span').textContent, cell.querySelector('.half.bottom span').textContent,
                               Number(cell.dataset.code)]), 600 + 250 + b.flip + 300);
    """)
    latency = driver.execute_script("return flapd.latency.slice().sort((a, b) => a - b)")
    first_board = driver.execute_script("return flapd.readyAt")

    # 6. Status: boards, zones, timing plot; the quiet switch works from its button.
    driver.get(base + "/#status")
    wait.until(lambda d: d.find_element(By.ID, "status").get_attribute("data-loaded"))
    out["status-zone-sender"] = texts("#status table:nth-of-type(2) td")[:6]
    out["histogram-bars"] = len(texts("svg.histogram rect"))
    click("quiet-on")
    wait.until(lambda d: any("quiet now" in t for t in texts("#quietstate")))
    out["quiet-after-on"] = http("GET", "/status")[1]["quiet"]
    click("quiet-auto")
    wait.until(lambda d: not any("quiet now" in t for t in texts("#quietstate")))
    out["quiet-after-auto"] = http("GET", "/status")[1].get("quiet")
    driver.set_window_size(1400, 1500)  # the whole status page, plots included
    driver.save_screenshot(f"{outdir}/status.png")
    driver.set_window_size(1400, 1000)
    out["status-colours"] = len(Image.open(f"{outdir}/status.png").convert("RGB").getcolors(1 << 24) or [])

    # 7. The board alone, as a wall display.
    driver.get(base + "/?display")
    wait.until(lambda d: d.execute_script("return flapd.ready"))
    out["display-header-hidden"] = not driver.find_element(By.TAG_NAME, "header").is_displayed()
    driver.save_screenshot(f"{outdir}/display.png")

    # Figures, not asserted: page weight, time to the first board, conductor → page latency.
    out["page-bytes"] = driver.execute_script(
        "return performance.getEntriesByType('resource').concat(performance.getEntriesByType('navigation')).reduce((n, e) => n + e.transferSize, 0)")
    raw_done.wait(WAIT)
    out["raw-latency-ms"] = sorted(raw)
    out["first-board-ms"] = first_board
    out["latency-ms"] = latency
    if shots:
        for name, shot in (("compose", "board"), ("status", "status"), ("display", "display")):
            shutil.copy(f"{outdir}/{name}.png", f"{shots}/web-{shot}.png")
finally:
    out["console-errors"] = [e["message"] for e in driver.execute(Command.GET_LOG, {"type": "browser"})["value"] if e["level"] == "SEVERE" and "401" not in e["message"]]
    driver.quit()
    service.stop()
print(json.dumps(out))
