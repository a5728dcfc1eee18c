import Foundation
import TestSupport
import Testing

/// What docs/operations.md tells an operator to install, checked by the
/// tools that will read it: the scrape config and alert rules by promtool
/// (Debian's prometheus package), the timer units by systemd-analyze.
@Suite struct OperationsDocTests {
    static let page = repositoryRoot + "/docs/operations.md"
    static let promtool = "/usr/bin/promtool"

    /// The page's fenced blocks in `language`, in order.
    static func blocks(_ language: String) throws -> [String] {
        let text = try String(contentsOfFile: page, encoding: .utf8)
        var blocks: [String] = []
        var current: [Substring]?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if current == nil, line == "```" + language {
                current = []
            } else if current != nil, line == "```" {
                blocks.append(current!.joined(separator: "\n") + "\n")
                current = nil
            } else {
                current?.append(line)
            }
        }
        return blocks
    }

    @Test func theScrapeConfigAndTheAlertRulesPassPromtool() async throws {
        try requireTool(Self.promtool, package: "prometheus")
        let yaml = try Self.blocks("yaml")
        let rules = try #require(
            yaml.first { $0.contains("alert: JobdJobsRejected") }, "no alert rules in \(Self.page)")
        let scrape = try #require(yaml.first { $0.contains("scrape_configs:") }, "no scrape config in \(Self.page)")
        let folder = try makeTemporaryFolder()
        try write(rules, to: folder + "/rules.yml")
        try write(scrape + "rule_files: [rules.yml]\n", to: folder + "/prometheus.yml")

        let config = try await runCommand(Self.promtool, ["check", "config", folder + "/prometheus.yml"])
        #expect(config.status == 0, "promtool check config: \(config.output)\(config.error)")
        let checked = try await runCommand(Self.promtool, ["check", "rules", folder + "/rules.yml"])
        #expect(checked.status == 0, "promtool check rules: \(checked.output)\(checked.error)")
        #expect(checked.output.contains("SUCCESS: 2 rules found"))
    }

    /// The rule fires for a definition with 10 rejections in an hour, not
    /// for one with 5 (nor for fulfilled jobs); JobdDown once `up` is 0 for 2 min.
    @Test func theRejectedJobsAlertFiresAboveFiveAnHour() async throws {
        try requireTool(Self.promtool, package: "prometheus")
        let rules = try #require(try Self.blocks("yaml").first { $0.contains("alert: JobdJobsRejected") })
        let folder = try makeTemporaryFolder()
        try write(rules, to: folder + "/rules.yml")
        try write(
            """
            rule_files: [rules.yml]
            evaluation_interval: 1m
            tests:
              - interval: 1m
                input_series:
                  - series: 'jobd_jobs_resolved_total{job="jobd", definition="report", state="rejected"}'
                    values: '0+1x10 10x50'
                  - series: 'jobd_jobs_resolved_total{job="jobd", definition="sync", state="rejected"}'
                    values: '0+1x5 5x55'
                  - series: 'jobd_jobs_resolved_total{job="jobd", definition="sync", state="fulfilled"}'
                    values: '0+10x60'
                  - series: 'up{job="jobd"}'
                    values: '1x20 0x40'
                alert_rule_test:
                  - eval_time: 20m
                    alertname: JobdJobsRejected
                    exp_alerts:
                      - exp_labels: { severity: warning, definition: report }
                        exp_annotations:
                          summary: "report: 10 jobs rejected in the last hour"
                          description: "jobctl list --state rejected --definition report"
                  - eval_time: 20m
                    alertname: JobdDown
                    exp_alerts: []
                  - eval_time: 25m
                    alertname: JobdDown
                    exp_alerts:
                      - exp_labels: { severity: critical, job: jobd }

            """, to: folder + "/rules.test.yml")
        let result = try await runCommand(Self.promtool, ["test", "rules", folder + "/rules.test.yml"])
        #expect(result.status == 0, "promtool test rules: \(result.output)\(result.error)")
    }

    @Test func theTextfileCollectorTimerUnitsVerify() async throws {
        let analyze = "/usr/bin/systemd-analyze"
        try requireTool(analyze, package: "systemd")
        let folder = try makeTemporaryFolder()
        var units: [String] = []
        for block in try Self.blocks("ini") {
            // Each unit block starts with `# /etc/systemd/system/NAME`.
            guard let first = block.split(separator: "\n").first, first.hasPrefix("# /etc/systemd/system/") else {
                continue
            }
            let name = String(first.dropFirst("# /etc/systemd/system/".count))
            try write(block, to: folder + "/" + name)
            units.append(name)
        }
        #expect(units == ["jobd-metrics.service", "jobd-metrics.timer"])
        var environment = ProcessInfo.processInfo.environment
        environment["SYSTEMD_UNIT_PATH"] = folder + ":"
        let result = try await runCommand(analyze, ["verify", "--man=no"] + units, environment: environment)
        #expect(result.status == 0 && result.output.isEmpty && result.error.isEmpty, "\(result)")
    }
}
