/// The pages of logging in and out: plain forms, no script, every user
/// string escaped as on the other pages.
public enum AccessPages {
    /// The login form; `message` says why the last try failed. `next` is
    /// where to go after logging in (a path of this dashboard).
    public static func login(node: String, message: String?, next: String) -> String {
        var body: HTML = "<h1>Log in</h1>"
        if let message { body += "<div class=\"problem\">\(message)</div>" }
        body += """
            <form method="post" action="login" class="login">
            <input type="hidden" name="next" value="\(attribute: next)">
            <label>User <input name="user" autocomplete="username" required></label>
            <label>Password <input name="password" type="password" autocomplete="current-password" required></label>
            <button type="submit">Log in</button>
            </form>
            """
        return frame(title: "Log in", node: node, body: body)
    }

    /// Who is logged in, with the form that logs out.
    public static func account(node: String, user: String, role: String, csrf: String) -> String {
        let body: HTML = """
            <h1>Logged in</h1>
            <p>As <b>\(user)</b>, role <b>\(role)</b>. <a href="./">The jobs</a></p>
            <form method="post" action="logout">
            <input type="hidden" name="csrf" value="\(attribute: csrf)">
            <button type="submit">Log out</button>
            </form>
            """
        return frame(title: "Logged in", node: node, body: body)
    }

    /// A short page for a refusal (403, 429).
    public static func refusal(node: String, heading: String, detail: String) -> String {
        frame(title: heading, node: node, body: Layout.problem(heading, detail))
    }

    private static func frame(title: String, node: String, body: HTML) -> String {
        let html: HTML = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta http-equiv="Content-Security-Policy" content="\(attribute: Layout.contentSecurityPolicy)">
            <meta name="referrer" content="same-origin">
            <title>\(plain: title, limit: 120) · jobd \(plain: node, limit: 120)</title>
            <style>\(HTML(rendered: Styles.css))
            form.login label { display: block; margin: .5em 0 }</style></head>
            <body><header><a class="brand" href="./">jobd</a><span class="node">\(node)</span></header>
            <main>
            \(body)
            </main>
            </body></html>

            """
        return html.rendered
    }
}
