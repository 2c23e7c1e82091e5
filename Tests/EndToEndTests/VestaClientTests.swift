import EndToEndSupport
import Foundation
import Testing

/// Issue 15, item 5: flapd's local API as existing Vestaboard clients see it — the PyPI `vesta`
/// client (0.9.0, `vesta.LocalClient`) and requests shaped exactly as Home Assistant's
/// integration (natekspencer/ha-vestaboard, `client.py`) sends them — against a real flapd.
@Suite struct VestaClientTests {
    /// What the script does, in order; it prints one JSON object of what it saw.
    /// ha-vestaboard's requests (aiohttp there; httpx here, the same method, path, headers and
    /// body): `check_endpoint` GETs /local-api/message with the key header — an empty one when it
    /// has no key — and takes 401 with the body exactly `Invalid API key` as a wrong key;
    /// `write_message` POSTs `{"characters": [[…]], "strategy": …, "step_interval_ms": …,
    /// "step_size": …}` (no `strategy` for classic) and succeeds on 201 only; `enable` POSTs
    /// /local-api/enablement with `X-Vestaboard-Local-Api-Enablement-Token` and reads `apiKey`.
    static let script = #"""
        import json, sys, httpx, vesta
        base = f"http://127.0.0.1:{sys.argv[1]}"
        out = {}
        client = vesta.LocalClient(base_url=base)
        try:
            client.enable("wrong-token")
        except httpx.HTTPStatusError as e:
            out["enable-wrong"] = [e.response.status_code, e.response.text]
        out["enable"] = client.enable("open-sesame")
        rows = [[0] * 22 for _ in range(6)]
        rows[1][2:7] = [8, 5, 12, 12, 15]               # HELLO
        rows[2][2:11] = [63, 64, 65, 66, 67, 68, 69, 70, 71]  # every colour chip
        rows[3][2:8] = [37, 38, 55, 56, 59, 62]         # ! @ , . / °
        out["write"] = client.write_message(rows)
        out["read-matches"] = client.read_message() == rows
        try:
            vesta.LocalClient("wrong-key", base_url=base).read_message()
        except httpx.HTTPStatusError as e:
            out["wrong-key"] = [e.response.status_code, e.response.text]
        ha = httpx.Client(base_url=base)
        r = ha.get("/local-api/message", headers={"X-Vestaboard-Local-Api-Key": ""})
        out["ha-check-no-key"] = [r.status_code, r.text]
        key = {"X-Vestaboard-Local-Api-Key": out["enable"]}
        r = ha.get("/local-api/message", headers=key)
        out["ha-check"] = r.status_code
        out["ha-check-matches"] = r.json()["message"] == rows
        wave = [[0] * 22 for _ in range(6)]
        wave[0][0:4] = [23, 1, 22, 5]                   # WAVE
        r = ha.post("/local-api/message", headers=key, json={"characters": wave, "strategy": "column", "step_interval_ms": 50, "step_size": 2})
        out["ha-write"] = r.status_code
        out["ha-read"] = ha.get("/local-api/message", headers=key).json()["message"] == wave
        r = ha.post("/local-api/message", headers=key, json={"characters": wave, "strategy": "zigzag"})
        out["ha-bad-strategy"] = r.status_code
        print(json.dumps(out))
        """#

    @Test(.timeLimit(.minutes(10))) func vestaAndHomeAssistantRequestsWorkUnchanged() async throws {
        let dir = try scratchDirectory("flap-vesta")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let venv = try FlapdProcess([QEMUGuest.repository.path + "/Tests/clients/venv"], executable: "/bin/bash")
        try #require(await venv.waitForSlowExit() == 0, "the client venv: \(venv.stderr)")
        let python = venv.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        try "local_api: { port: 0, key: sesame-key, enablement_token: open-sesame }\n".write(toFile: dir + "/c.yaml", atomically: true, encoding: .utf8)
        try Self.script.write(toFile: dir + "/clients.py", atomically: true, encoding: .utf8)
        let flapd = try FlapdProcess(["demo", "--config", dir + "/c.yaml", "--plain", "--no-sound"])
        defer { flapd.terminate() }
        let port = try #require(await flapd.apiPort(), "\(flapd.stderr)")
        let clients = try FlapdProcess([dir + "/clients.py", "\(port)"], executable: python)
        #expect(await clients.waitForSlowExit() == 0, "\(clients.stderr)")
        let seen = try #require(try JSONSerialization.jsonObject(with: Data(clients.stdout.utf8)) as? [String: Any], "\(clients.stdout)\n\(clients.stderr)")
        #expect(seen["enable-wrong"] as? [AnyHashable] == [401, "Invalid enablement token"])
        #expect(seen["enable"] as? String == "sesame-key", "the enablement hands out the configured key")
        #expect(seen["write"] as? Bool == true, "201")
        #expect(seen["read-matches"] as? Bool == true, "colour chips and symbols read back as written")
        #expect(seen["wrong-key"] as? [AnyHashable] == [401, "Invalid API key"])
        #expect(seen["ha-check-no-key"] as? [AnyHashable] == [401, "Invalid API key"])
        #expect(seen["ha-check"] as? Int == 200 && seen["ha-check-matches"] as? Bool == true)
        #expect(seen["ha-write"] as? Int == 201)
        #expect(seen["ha-read"] as? Bool == true)
        #expect(seen["ha-bad-strategy"] as? Int == 400)
    }
}
