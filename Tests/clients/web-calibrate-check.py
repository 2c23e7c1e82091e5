"""flapd's calibration page in a real browser (issue 35): Debian's Chromium, headless, driven by
Selenium through Debian's chromedriver, against a running flapd whose board is simulated drums
(`gpio: { chip: simulated }`). Everything by the keyboard: start, pick module 0,1 with the
arrows, three steps with +, type A, Enter (mark), n (the next module), a flap with f, end; then the
self-test button, and the status page's line of magnet passes per module. Prints
one JSON object of what it saw; the test (WebPageTests) decides. Keeps calibrate.png in OUTDIR.

usage: web-calibrate-check.py PORT KEY OUTDIR
"""
import json, sys, urllib.request, urllib.error
from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.command import Command
from selenium.webdriver.support.ui import WebDriverWait

port, key, outdir = sys.argv[1], sys.argv[2], sys.argv[3]
base = f"http://127.0.0.1:{port}"
WAIT = 120  # seconds: a bound for a loaded machine, not a measure


def http(method, path):
    req = urllib.request.Request(base + path, method=method, headers={"X-Vestaboard-Local-Api-Key": key})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read() or b"null")


options = webdriver.ChromeOptions()
options.binary_location = "/usr/bin/chromium"
for a in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1100,760",
          "--force-device-scale-factor=1", "--no-first-run", "--disable-extensions", f"--user-data-dir={outdir}/profile"]:
    options.add_argument(a)
driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
wait = WebDriverWait(driver, WAIT, poll_frequency=0.05, ignored_exceptions=[StaleElementReferenceException])
out = {}


def here():
    # Read in one script: the grid is drawn again now and then, so an element found may be gone when read.
    return driver.execute_script("const h = document.querySelector('#cal-grid div.here'); return h && h.dataset.module")


try:
    # The board homes at start: calibrate once it is still (a module still turning is refused).
    wait.until(lambda _: not any(b["moving"] for b in http("GET", "/status")["boards"]))
    driver.get(base + "/app.css")  # the page's origin, without running the page (it would ask for the key)
    driver.execute_script("localStorage.setItem('flapd-key', arguments[0])", key)
    driver.get(base + "/#calibrate")
    wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#cal-grid div")) > 0)
    grid = driver.find_element(By.ID, "cal-grid")
    out["cells"] = len(driver.find_elements(By.CSS_SELECTOR, "#cal-grid div"))
    driver.find_element(By.ID, "cal-toggle").click()
    wait.until(lambda d: d.find_element(By.ID, "cal-state").get_attribute("data-active") == "1")
    out["started"] = http("GET", "/calibration")["session"]["active"]
    driver.execute_script("document.getElementById('cal-grid').focus()")  # the keys' target; 0,0 picked
    grid.send_keys(Keys.ARROW_RIGHT)
    out["picked"] = here()
    out["after-steps"] = []
    for _ in range(3):
        grid.send_keys("+")
        wait.until(lambda d: "place" in d.find_element(By.ID, "cal-module").text
                   and d.find_element(By.ID, "cal-module").text not in out["after-steps"])
        out["after-steps"].append(driver.find_element(By.ID, "cal-module").text)
        wait.until(lambda _: not http("GET", "/status")["boards"][0]["moving"])
    grid.send_keys("a")
    out["showing"] = driver.find_element(By.ID, "cal-showing").get_attribute("value")
    grid.send_keys(Keys.ENTER)
    wait.until(lambda d: "saved offset" in d.find_element(By.ID, "cal-module").text)
    out["after-mark"] = driver.find_element(By.ID, "cal-module").text
    out["done"] = driver.execute_script("return [...document.querySelectorAll('#cal-grid div.done')].map(e => e.dataset.module)")
    grid.send_keys("n")
    out["next"] = here()
    grid.send_keys("f")
    wait.until(lambda d: "module 0,2, flap" in d.find_element(By.ID, "cal-module").text)  # the answer, not the pick's line
    out["after-flap"] = driver.find_element(By.ID, "cal-module").text
    driver.save_screenshot(f"{outdir}/calibrate.png")
    driver.find_element(By.ID, "cal-toggle").click()
    wait.until(lambda d: d.find_element(By.ID, "cal-state").get_attribute("data-active") == "0")
    out["ended"] = not http("GET", "/calibration")["session"]["active"]
    out["key-asked"] = driver.find_element(By.ID, "keyform").is_displayed()
    wait.until(lambda _: not http("GET", "/status")["boards"][0]["moving"])  # the last mark's module lands first
    driver.find_element(By.ID, "selftest").click()
    wait.until(lambda d: d.find_elements(By.ID, "selftest-summary"))
    out["selftest"] = driver.find_element(By.ID, "selftest-summary").text
    # Each module passed its magnet in its turn: the status page draws its line of passes.
    driver.get(base + "/#status")
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, ".modules div"))
    wait.until(lambda d: d.execute_script("return document.querySelectorAll('.modules svg.spark').length === document.querySelectorAll('.modules div').length"))
    out["sparklines"], out["magnet-title"] = driver.execute_script(
        "return [document.querySelectorAll('.modules svg.spark').length, document.querySelector('.modules div').title]")
    out["console-errors"] = [e["message"] for e in driver.execute(Command.GET_LOG, {"type": "browser"})["value"] if e["level"] == "SEVERE" and "401" not in e["message"]]
except Exception:
    # What the page said when a wait gave up, and what was seen before: for the test's report.
    out["module-line-then"] = driver.execute_script("const m = document.getElementById('cal-module'); return m && m.textContent")
    out["browser-log"] = [e["message"] for e in driver.execute(Command.GET_LOG, {"type": "browser"})["value"]][-10:]
    print(json.dumps(out), file=sys.stderr)
    raise
finally:
    driver.quit()
print(json.dumps(out))
