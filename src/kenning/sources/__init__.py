"""The raw layer: connectors that turn mailboxes, transcripts, chats and calendars into
``sources/<kind>/`` files through one writer, :class:`kenning.sources.store.SourceStore`.

Modules: ``store`` (files and sync state), ``owner`` (the vault owner's identity), ``email``
(mbox, Maildir, .eml, IMAP; threading), ``meetings`` (transcripts), ``chats`` (chat and agent
sessions), ``calendar`` (.ics). Each connector module exposes ``sync(root, target, ...)``
returning a :class:`kenning.sources.store.SyncReport`.
"""
