"""Every package with background work, imported once: the one module that knows them all.

Each package registers its own job kinds (``jobs.queue.job_kind``) and periodic tasks
(``jobs.scheduler.periodic``) when it is imported; the job engine imports none of them. Only the
entries import this module: ``app.py`` (a server runs jobs and the scheduler when embedded) and
the ``admit worker`` / ``admit scheduler`` commands. A new package with jobs or periodic tasks
adds its line here, or its work is never run. The audit log's flush listener is registered
here too: whatever runs jobs or serves requests writes configuration, and must log it.
"""

import admit.audit.log
import admit.carts.tasks
import admit.checkin.exits
import admit.exports.tasks
import admit.invoices.tasks
import admit.mail.tasks
import admit.notifications.retention
import admit.scheduled_exports.tasks
import admit.sendmail.tasks
import admit.shop.buyer_mails
import admit.shredders.tasks
import admit.tickets.tasks
import admit.uploads.service
import admit.users.tasks
import admit.waitinglist.auto
import admit.webhooks.delivery
import admit.webhooks.tasks  # noqa: F401
