"""The documentation site's build fixture (``tests/docs/site_build.py``, shared with the browser test)."""

from tests.docs.site_build import docs_site as docs_site
