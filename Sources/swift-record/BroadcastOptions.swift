import ArgumentParser

/// What `--source broadcast:NAME` does when its sender goes away without finishing.
struct BroadcastOptions: ParsableArguments {
    /// `hold`: the recording goes on with the sender's last picture; `stop`: it ends there.
    enum SenderExit: String, ExpressibleByArgument, CaseIterable {
        case hold, stop
    }

    @Option(name: .customLong("on-sender-exit"),
            help: ArgumentHelp("With --source broadcast:NAME, a sender that goes away without finishing (killed, crashed): hold (default) goes on recording its last picture until stopped; stop ends the recording at its last picture, the file finished, exit status 1.", valueName: "hold|stop"))
    var onSenderExit: SenderExit?
}
