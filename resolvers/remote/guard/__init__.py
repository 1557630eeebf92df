"""What holds every request of a remote service, so a service that stalls costs a run seconds:
its circuit (``breaker``: opens at once on a stall, stays open for the run after a few openings),
its pace and connection slots (``pacing``: waits that end when the circuit opens or the run
stops), every byte at the socket (``wire``: the deadline, a minimum rate, the stop), and what all
the clients of a run share (``session``: the run's remote time, bounded as a whole; the stop of an
interrupt). ``resolvers.remote.http``'s client uses them.

May import: ``resolvers.errors``, ``resolvers.remote.bounds``; httpx and httpcore (``wire``).
"""
