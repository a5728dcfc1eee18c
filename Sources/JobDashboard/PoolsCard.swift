import JobStore

/// The pools: this jobd's running jobs against each pool's cap, and the
/// jobs the store holds for it (pending; running on every host). A paused
/// pool is marked; an operator gets a form to pause or resume each.
enum PoolsCard {
    static func render(
        _ pools: [PoolRow], _ counts: [PoolJobCounts], pauses: [Pause] = [], forms: ActionForms? = nil
    ) -> HTML {
        let paused = Dictionary(
            pauses.filter { $0.scope == .pool }.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let byName = Dictionary(counts.map { ($0.pool, $0) }, uniquingKeysWith: { first, _ in first })
        // The configured pools first, in their order; then pools only the store knows of.
        let configured = Set(pools.map(\.name))
        let extra = counts.filter { !configured.contains($0.pool) }.map {
            PoolRow(name: $0.pool, capacity: 0, running: 0)
        }
        let rows = (pools + extra).map { pool -> HTML in
            let stored = byName[pool.name]
            let share = pool.capacity > 0 ? min(100, pool.running * 100 / pool.capacity) : 0
            var detail: HTML = "\(stored?.pending ?? 0) pending"
            if let running = stored?.running, running != pool.running {
                detail += " · \(running) running on all nodes"
            }
            let cap: HTML = pool.capacity > 0 ? "\(pool.running) / \(pool.capacity)" : "not configured here"
            var control: HTML = ""
            if let pause = paused[pool.name] {
                control =
                    "<div>\(PauseForms.mark(pause))\(forms.map { PauseForms.resume(.pool, pool.name, $0) } ?? "")</div>"
            } else if let forms {
                control = PauseForms.pause(.pool, pool.name, forms)
            }
            return """
                <div class="pool"><span>\(pool.name, limit: 60)</span><span class="num">\(cap)</span></div>\
                <div class="bar" title="\(attribute: "\(pool.running) of \(pool.capacity) running")"><i style="width:\(share)%"></i></div>\
                <div class="note">\(detail)</div>\(control)
                """
        }
        let content = rows.isEmpty ? "<p class=\"none\">No pools.</p>" : HTML.join(rows)
        return "<div class=\"card\"><h2>Pools: running / cap</h2>\(content)</div>"
    }
}
