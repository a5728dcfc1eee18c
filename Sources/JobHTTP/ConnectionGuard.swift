import Hummingbird
import HummingbirdCore
import JobValues
import Logging
import NIOCore
import Synchronization

/// What one client may hold of the listener. A client that sends its
/// request slowly, never reads its response, or opens many connections
/// cannot keep `/metrics` and `/healthz` from anyone else.
public struct ConnectionLimits: Sendable {
    /// A request's head (request line and headers) must arrive whole within
    /// this long of the connection's opening, or of the first byte of a
    /// later request on it; else the client gets a 408 and the connection
    /// is closed. The control socket bounds a request the same way.
    public var headerDeadline: Duration
    /// A response the client does not read (the socket stays full) for this
    /// long closes the connection.
    public var writeDeadline: Duration
    /// Connections one IP address may hold at once; one more gets a 503 and
    /// is closed. (A unix socket's clients are not counted by address.)
    public var perAddress: Int

    public init(headerDeadline: Duration = .seconds(2), writeDeadline: Duration = .seconds(10), perAddress: Int = 16) {
        self.headerDeadline = headerDeadline
        self.writeDeadline = writeDeadline
        self.perAddress = perAddress
    }
}

/// The open connections of each client address.
final class ConnectionCounts: Sendable {
    private let counts = Mutex<[String: Int]>([:])
    let limit: Int

    init(limit: Int) { self.limit = limit }

    /// Counts one more connection of `address`, unless it holds `limit` already.
    func admit(_ address: String) -> Bool {
        counts.withLock { counts in
            let held = counts[address, default: 0]
            guard held < limit else { return false }
            counts[address] = held + 1
            return true
        }
    }

    func release(_ address: String) {
        counts.withLock { counts in
            guard let held = counts[address] else { return }
            counts[address] = held > 1 ? held - 1 : nil
        }
    }
}

/// HTTP/1 as Hummingbird serves it, with a ``ConnectionGuardHandler`` in
/// front of the HTTP decoder.
struct GuardedHTTP1Channel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value
    let inner: HTTP1Channel
    let limits: ConnectionLimits
    let counts: ConnectionCounts

    init(
        responder: @escaping HTTPChannelHandler.Responder, configuration: HTTP1Channel.Configuration,
        limits: ConnectionLimits
    ) {
        self.inner = HTTP1Channel(responder: responder, configuration: configuration)
        self.limits = limits
        self.counts = ConnectionCounts(limit: limits.perAddress)
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        do {
            try channel.pipeline.syncOperations.addHandler(
                ConnectionGuardHandler(limits: limits, counts: counts), position: .first)
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        return inner.setup(channel: channel, logger: logger)
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}

/// On the connection's bytes, before the HTTP decoder: counts the client's
/// connections, and closes one whose request head does not arrive in time
/// or whose response is not read.
///
/// A request's head ends at its first empty line (CRLF CRLF, or a bare LF
/// LF, as the decoder accepts); the bytes after it begin the next request
/// (the listener serves no request with a body: it refuses one with 413).
final class ConnectionGuardHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let limits: ConnectionLimits
    private let counts: ConnectionCounts
    private var counted: String?
    private var started = false
    /// Whether a request's head is being received, and how far its end
    /// (LF, then an optional CR, then LF) has been seen.
    private var inHead = false
    private var endProgress = 0
    /// Whether a whole head arrived on this connection: then a response may
    /// be under way and none of ours is written.
    private var answered = false
    private var headerTimer: Scheduled<Void>?
    private var writeTimer: Scheduled<Void>?

    init(limits: ConnectionLimits, counts: ConnectionCounts) {
        self.limits = limits
        self.counts = counts
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context)
        context.fireChannelActive()
    }

    private func start(_ context: ChannelHandlerContext) {
        guard !started else { return }
        started = true
        if let address = context.channel.remoteAddress?.ipAddress {
            guard counts.admit(address) else {
                refuse(
                    context, status: "503 Service Unavailable",
                    "This address holds \(limits.perAddress) connections to jobd already; close one and retry.\n")
                return
            }
            counted = address
        }
        beginHead(context)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        buffer.withUnsafeReadableBytes { bytes in
            for byte in bytes {
                if !inHead { beginHead(context) }
                switch (endProgress, byte) {
                case (_, UInt8(ascii: "\n")) where endProgress > 0: headArrived()
                case (_, UInt8(ascii: "\n")): endProgress = 1
                case (1, UInt8(ascii: "\r")): endProgress = 2
                default: endProgress = 0
                }
            }
        }
        context.fireChannelRead(data)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            writeTimer?.cancel()
            writeTimer = nil
        } else if writeTimer == nil {
            let channel = context.channel
            writeTimer = context.eventLoop.scheduleTask(in: TimeAmount(limits.writeDeadline)) {
                channel.close(promise: nil)
            }
        }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        stop()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        stop()
    }

    private func beginHead(_ context: ChannelHandlerContext) {
        inHead = true
        endProgress = 0
        headerTimer?.cancel()
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        headerTimer = context.eventLoop.scheduleTask(in: TimeAmount(limits.headerDeadline)) {
            let (handler, context) = loopBound.value
            handler.headerTimer = nil
            if handler.answered {
                context.close(promise: nil)
            } else {
                handler.refuse(
                    context, status: "408 Request Timeout",
                    "The request's headers did not arrive within \(handler.limits.headerDeadline.jobdText).\n")
            }
        }
    }

    private func headArrived() {
        inHead = false
        endProgress = 0
        answered = true
        headerTimer?.cancel()
        headerTimer = nil
    }

    /// Writes a whole response of our own, before any request was decoded,
    /// and closes the connection.
    private func refuse(_ context: ChannelHandlerContext, status: String, _ text: String) {
        let head =
            "HTTP/1.1 \(status)\r\nContent-Type: text/plain; charset=utf-8\r\n"
            + "X-Content-Type-Options: nosniff\r\nContent-Length: \(text.utf8.count)\r\nConnection: close\r\n\r\n"
        let buffer = context.channel.allocator.buffer(string: head + text)
        let channel = context.channel
        context.writeAndFlush(NIOAny(buffer)).whenComplete { _ in channel.close(promise: nil) }
    }

    private func stop() {
        headerTimer?.cancel()
        headerTimer = nil
        writeTimer?.cancel()
        writeTimer = nil
        if let counted { counts.release(counted) }
        counted = nil
    }
}
