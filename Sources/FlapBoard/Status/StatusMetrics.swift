import Prometheus

extension StatusReport {
    /// The Prometheus text of `GET /metrics`: the same report, through swift-prometheus (its
    /// registry names, types, escapes and writes the exposition format). The registry is made
    /// anew for each scrape from this one model: the counters live where they are counted — the
    /// conductor's thread, the mixer, the serial links — without a lock or an allocation on a
    /// timed path for metrics' sake, and each scrape reads them as the report does.
    ///
    /// Lateness stays a quantile family (`flapd_lateness_microseconds{quantile=…}`) as a gauge,
    /// beside the conductor's coarse bins, cumulative: `flapd_lateness_bins_total{below_us=…}`.
    public var prometheus: String {
        let r = PrometheusCollectorRegistry()
        func gauge(_ name: String, _ help: String, _ value: Double, _ labels: [(String, String)] = []) {
            r.makeGauge(descriptor: MetricNameDescriptor(metricName: name, unitName: "", helpText: help), labels: labels).set(to: value)
        }
        func counter(_ name: String, _ help: String, _ value: Int, _ labels: [(String, String)] = []) {
            r.makeCounter(descriptor: MetricNameDescriptor(metricName: name, unitName: "", helpText: help), labels: labels).increment(by: Int64(value))
        }
        counter("flapd_flips_total", "Flips fired by the conductor.", conductor.flips)
        let lateness = "Lateness of fired flips (actual - planned), microseconds."
        for (q, v) in [("0.5", conductor.latenessP50Us), ("0.99", conductor.latenessP99Us), ("1", conductor.latenessMaxUs)] {
            gauge("flapd_lateness_microseconds", lateness, Double(v), [("quantile", q)])
        }
        if let bins = conductor.latenessBins, let edges = latenessBinsUs, bins.count == edges.count + 1 {
            var below = 0
            for (i, n) in bins.enumerated() {
                below += n
                counter("flapd_lateness_bins_total", "Fired flips at most this late (microseconds; cumulative).", below,
                        [("below_us", i < edges.count ? String(edges[i]) : "inf")])
            }
        }
        for b in boards {
            gauge("flapd_board_moving", "Whether a board is in a transition.", b.moving ? 1 : 0, [("board", b.id)])
            gauge("flapd_board_faulty_modules", "Modules reported faulty.", Double(b.modules.faulty), [("board", b.id)])
            for (i, m) in (b.modules.reported ?? []).enumerated() {
                let at = [("board", b.id), ("row", String(i / b.cols)), ("col", String(i % b.cols))]
                if let e = m.magnetError {
                    gauge("flapd_module_magnet_error_steps", "How far from where it was due a module met its magnet at its last pass (steps; positive: late).", Double(e), at)
                }
                if let e = m.worstMagnetError {
                    gauge("flapd_module_magnet_error_worst_steps", "The largest magnet error of a module's latest 32 passes (steps, sign kept).", Double(e), at)
                }
            }
            for (row, line) in (b.flips ?? []).enumerated() {
                for (col, n) in line.enumerated() {
                    counter("flapd_module_flips_total", "Flips a module has made (its wear).", n,
                            [("board", b.id), ("row", String(row)), ("col", String(col))])
                }
            }
        }
        if let q = quiet { gauge("flapd_quiet_hours", "Whether quiet hours hold the board's motion now.", q.active ? 1 : 0) }
        gauge("flapd_messages_waiting", "Messages not shown yet (held letters, quiet hours).", Double(waiting?.count ?? 0))
        gauge("flapd_message_api_connected", "Whether the message API is connected.", messageApi.connected ? 1 : 0)
        counter("flapd_message_api_skipped_frames_total", "Frames of the message API skipped as malformed.", messageApi.skippedFrames ?? 0)
        if let s = sound {
            counter("flapd_sound_clacks_total", "Clacks played.", s.clacks)
            counter("flapd_sound_underruns_total", "Times the sound device ran dry.", s.underruns)
        }
        gauge("flapd_uptime_seconds", "Seconds since flapd started.", uptimeS)
        gauge("flapd_build_info", "flapd's version.", 1, [("version", versions["flapd"] ?? "")])
        var out: [UInt8] = []
        r.emit(into: &out)
        return String(decoding: out, as: UTF8.self)
    }
}
