"""flaphub's sender page in a real browser: Debian's Chromium, headless, driven by Selenium
through Debian's chromedriver, against a running flaphub (and the flapd it serves). Prints one
JSON object of what it saw; the test (HubWebPageTests) decides.

usage: hub-web-check.py LINK_URL TOKEN OUTDIR
  LINK_URL  a one-time sign-in link (flaphub user link alice)
  TOKEN     the same user's own token (to sign in by token after signing out)
"""
import json, sys, time
from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, NoSuchElementException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

link, token, outdir = sys.argv[1], sys.argv[2], sys.argv[3]
WAIT = 120  # seconds: a bound for a loaded machine, not a measure
FIRST = "Hello kitchen, see {63} you at the market, today at noon for lunch ok"
LATER = "See you later"

options = webdriver.ChromeOptions()
options.binary_location = "/usr/bin/chromium"
for a in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1200,1000",
          "--force-device-scale-factor=1", "--no-first-run", "--disable-extensions", f"--user-data-dir={outdir}/profile"]:
    options.add_argument(a)
options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
wait = WebDriverWait(driver, WAIT, poll_frequency=0.05, ignored_exceptions=[StaleElementReferenceException, NoSuchElementException])
js = driver.execute_script
out = {}


def text(selector):
    return js("const e = document.querySelector(arguments[0]); return e ? e.innerText : null", selector)


def rows():
    """The sent table: [id, recipient, content, status, unlock] per row, read at one instant."""
    return js("return [...document.querySelectorAll('#sent tr')].map(r => [r.dataset.id, r.cells[0].innerText,"
              " r.cells[1].innerText, r.dataset.status, r.querySelector('.unlock').dataset.unlock])")


def preview_of(content):
    wait.until(lambda d: js("const p = document.getElementById('previews'); return p.dataset.content === arguments[0]"
                            " && p.querySelector('.preview[data-recipient=kitchen] .grid') !== null", content))
    return js("""
        const p = document.querySelector('#previews .preview[data-recipient=kitchen]');
        const grid = p.querySelector('.grid');
        const cols = grid.style.gridTemplateColumns.match(/repeat\\((\\d+)/)[1] | 0;
        const cells = [...grid.children].map(c => c.className.startsWith('chip-') ? '{' + c.className.slice(5) + '}' : c.textContent);
        const rows = [];
        for (let i = 0; i < cells.length; i += cols) rows.push(cells.slice(i, i + cols));
        return { title: p.querySelector('h3').innerText, cells: rows,
                 cut: [...p.querySelectorAll('.cut')].map(e => e.innerText),
                 substitutions: [...p.querySelectorAll('.subst')].map(e => e.innerText) };
    """)


try:
    # 1. The one-time link signs in, and leaves the address.
    driver.get(link)
    wait.until(lambda d: text("#me") == "alice")
    out["signed-in"] = text("#me")
    out["hash-after-link"] = js("return location.hash")
    out["token-kept"] = js("return (localStorage.getItem('flaphub.token') || '').startsWith('fh_')")

    # 2. Friends, with the size the kitchen board gives alice.
    wait.until(lambda d: text("li[data-user=kitchen] .size"))
    out["friend-size"] = text("li[data-user=kitchen] .size")

    # 3. Compose: the preview follows the text as it is typed.
    driver.find_element(By.ID, "content").send_keys(FIRST)
    out["preview"] = preview_of(FIRST)
    driver.save_screenshot(f"{outdir}/compose.png")

    # 4. Send now: the row goes sent → delivered → displayed as the hub's events come.
    driver.find_element(By.ID, "send").click()
    wait.until(lambda d: js("return document.getElementById('send-result').dataset.status") == "201")
    out["send-result"] = text("#send-result")
    wait.until(lambda d: any(r[2] == FIRST for r in rows()))
    first = next(r for r in rows() if r[2] == FIRST)
    out["first-id"] = first[0]
    seen = [first[3]]
    deadline = time.time() + WAIT
    while seen[-1] != "displayed" and time.time() < deadline:
        now = next((r[3] for r in rows() if r[0] == first[0]), None)
        if now and now != seen[-1]:
            seen.append(now)
        time.sleep(0.02)
    out["first-statuses"] = seen

    # 5. Schedule one an hour ahead (to the second), see it scheduled, then delete it.
    box = driver.find_element(By.ID, "content")
    box.clear()
    box.send_keys(LATER)
    out["later-preview"] = preview_of(LATER)
    out["later-set"] = js("""
        const d = new Date(Date.now() + 3600e3); d.setMilliseconds(0);
        const p = (n) => String(n).padStart(2, '0');
        document.getElementById('unlock').value = `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
        return d.getTime() / 1000;""")
    js("document.getElementById('send-result').dataset.status = ''")
    driver.find_element(By.ID, "send").click()
    wait.until(lambda d: js("return document.getElementById('send-result').dataset.status") == "201")
    wait.until(lambda d: any(r[2] == LATER for r in rows()))
    later = next(r for r in rows() if r[2] == LATER)
    out["later-id"], out["later-status"], out["later-unlock"] = later[0], later[3], float(later[4])
    driver.save_screenshot(f"{outdir}/sent.png")
    js("document.querySelector(`#sent tr[data-id='${arguments[0]}'] button.delete`).click()", later[0])
    wait.until(lambda d: all(r[0] != later[0] for r in rows()))
    out["rows-after-delete"] = [[r[0], r[3]] for r in rows()]

    # 6. Sign out, then in with the token; the sent list is the same.
    driver.find_element(By.ID, "signout").click()
    wait.until(lambda d: js("return !document.getElementById('signin').hidden"))
    out["signed-out"] = text("#signin-problem")
    driver.find_element(By.ID, "token").send_keys(token)
    driver.find_element(By.CSS_SELECTOR, "#tokenform button").click()
    wait.until(lambda d: text("#me") == "alice" and any(r[0] == first[0] for r in rows()))
    out["token-rows"] = [[r[0], r[3]] for r in rows()]

    # 7. The link again: used once, refused now.
    driver.get(link)
    wait.until(lambda d: js("return !document.getElementById('signin').hidden") and text("#signin-problem"))
    out["link-again"] = text("#signin-problem")
    out["console-errors"] = [e["message"] for e in driver.get_log("browser")
                             if e["level"] == "SEVERE" and "status of 401" not in e["message"]]
finally:
    driver.quit()
    print(json.dumps(out))
