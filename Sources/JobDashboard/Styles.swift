/// The pages' one style sheet, inline (no file to serve, no CDN). Works from
/// 320 px wide up: tables turn into cards under 700 px. Follows the
/// reader's light or dark preference.
enum Styles {
    static let css = """
        :root{--bg:#f6f7f9;--card:#fff;--fg:#1d2330;--muted:#687083;--line:#e2e5eb;--accent:#2f6fdf;
        --pending:#8a93a6;--running:#2f6fdf;--fulfilled:#1e9e5a;--rejected:#d23c3c;--cancelled:#c98a12;--skipped:#b4bac6;
        --mono:ui-monospace,SFMono-Regular,Menlo,Consolas,"DejaVu Sans Mono",monospace}
        @media (prefers-color-scheme:dark){:root{--bg:#14171d;--card:#1c2029;--fg:#e4e7ee;--muted:#98a0b3;--line:#2c3240;
        --accent:#6a9cf5}}
        *{box-sizing:border-box}
        body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,
        "Noto Sans",sans-serif;-webkit-text-size-adjust:100%}
        a{color:var(--accent);text-decoration:none}a:hover{text-decoration:underline}
        header{display:flex;align-items:center;gap:18px;padding:10px 20px;background:var(--card);
        border-bottom:1px solid var(--line);flex-wrap:wrap}
        .brand{font-weight:700;font-size:18px;color:var(--fg)}nav{display:flex;gap:14px}
        nav a{color:var(--muted);padding:4px 0}nav a.on{color:var(--fg);border-bottom:2px solid var(--accent)}
        .node{margin-left:auto;color:var(--muted);font-size:13px}
        main{max-width:1180px;margin:0 auto;padding:18px 16px 8px}
        h1{font-size:21px;margin:4px 0 14px}h2{font-size:16px;margin:22px 0 10px}
        .cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(260px,1fr));gap:14px;margin-bottom:8px}
        @media (min-width:1000px){.cards.four{grid-template-columns:1fr 1fr 1fr 1.5fr}}
        .card{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:12px 14px;min-width:0}
        .card h2{margin:0 0 8px;font-size:13px;text-transform:uppercase;letter-spacing:.04em;color:var(--muted)}
        .counts{display:flex;flex-wrap:wrap;gap:6px 16px}.counts a{color:var(--fg)}.counts b{font-size:20px;display:block}
        .bar{height:8px;background:var(--line);border-radius:4px;overflow:hidden;margin:3px 0 9px}
        .bar i{display:block;height:100%;background:var(--running)}
        .pool,.line{display:flex;justify-content:space-between;gap:8px;font-size:14px;margin-top:6px}
        svg{display:block;width:100%;height:auto}svg text{fill:var(--muted);font:11px system-ui,sans-serif}
        .chart .grid{stroke:var(--line)}
        .s-pending{fill:var(--pending);background:var(--pending)}.s-running{fill:var(--running);background:var(--running)}
        .s-fulfilled{fill:var(--fulfilled);background:var(--fulfilled)}.s-rejected{fill:var(--rejected);background:var(--rejected)}
        .s-cancelled{fill:var(--cancelled);background:var(--cancelled)}.s-skipped{fill:var(--skipped);background:var(--skipped)}
        .state{display:inline-block;color:#fff;border-radius:9px;padding:0 8px;font-size:12px;font-weight:600;line-height:19px}
        .filters{display:flex;flex-wrap:wrap;gap:8px;align-items:end;margin:6px 0 12px}
        .filters label{display:flex;flex-direction:column;font-size:12px;color:var(--muted);gap:2px}
        input,select,button{font:inherit;padding:6px 8px;border:1px solid var(--line);border-radius:6px;
        background:var(--card);color:var(--fg)}button{background:var(--accent);color:#fff;border-color:var(--accent)}
        table{width:100%;border-collapse:collapse;background:var(--card);border:1px solid var(--line);border-radius:10px;
        overflow:hidden}
        th,td{text-align:left;padding:7px 10px;border-bottom:1px solid var(--line);vertical-align:top}
        th{font-size:12px;color:var(--muted);font-weight:600;background:var(--bg)}tr:last-child td{border-bottom:0}
        td.num{font-variant-numeric:tabular-nums}td.err{color:var(--rejected);max-width:360px;overflow-wrap:anywhere}
        .v,td,dd{unicode-bidi:isolate;overflow-wrap:anywhere}
        .ctl{background:#fde68a;color:#6b4500;border-radius:3px;padding:0 2px;font:11px var(--mono)}
        .log{font:12px var(--mono);white-space:pre-wrap;overflow-wrap:anywhere}.log .t{color:var(--muted)}.log .out{color:var(--muted);font-style:italic}
        .cut,.note{color:var(--muted);font-size:12px}.none{color:var(--muted)}
        pre{margin:0;padding:10px;background:var(--bg);border:1px solid var(--line);border-radius:6px;
        font:12.5px/1.45 var(--mono);white-space:pre-wrap;overflow-wrap:anywhere;max-height:420px;overflow:auto}
        pre.err{color:var(--rejected)}
        dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:4px 14px;margin:0}dt{color:var(--muted)}dd{margin:0}
        .stage{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:10px 14px;margin-bottom:10px}
        .stage h3{margin:0 0 6px;font-size:15px;display:flex;gap:8px;align-items:center;flex-wrap:wrap}
        .stage .kind{font:12px var(--mono);color:var(--muted)}.stage .meta{color:var(--muted);font-size:13px;margin-bottom:6px}
        .s-paused{background:var(--cancelled)}form.pause{display:flex;flex-wrap:wrap;gap:4px;margin:4px 0 8px}
        form.pause input[type=text]{flex:1;min-width:6em}.line.definition{align-items:center;margin:0 0 10px;flex-wrap:wrap}
        .pager,p.actions{display:flex;flex-wrap:wrap;gap:16px;margin:12px 0}.filters a.clear{align-self:center}details{margin:8px 0}summary{cursor:pointer}
        footer{max-width:1180px;margin:0 auto;padding:14px 16px 24px;color:var(--muted);font-size:12px}
        .problem{background:var(--card);border:1px solid var(--rejected);border-radius:10px;padding:12px 14px}
        @media (max-width:700px){header{padding:8px 12px;gap:12px}main{padding:12px 10px}
        table.rows,table.rows tbody{display:block;width:100%}table.rows thead{display:none}
        table.rows{background:none;border:0}
        table.rows tr{display:grid;grid-template-columns:1fr 1fr;gap:2px 12px;background:var(--card);
        border:1px solid var(--line);border-radius:10px;margin-bottom:8px;padding:8px 12px}
        table.rows td{border:0;padding:0;display:block;min-width:0}table.rows td:empty{display:none}
        table.rows td::before{content:attr(data-label);display:block;color:var(--muted);font-size:11px}
        table.rows td.err,table.rows td.wide{grid-column:1/-1}
        td.err{max-width:none}}
        """
}

extension Styles {
    /// Charts keep a readable size: the timeline scrolls sideways on a phone
    /// rather than shrinking its text.
    static let charts = """
        .scroll{overflow-x:auto}.scroll svg{min-width:600px;max-width:1000px}
        svg.timeline .grid{stroke:var(--line)}svg.timeline text{fill:var(--fg);font-size:13px}
        """
}
