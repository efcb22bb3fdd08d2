"""source_archive: one pinned archive (third_party/<name>/pin.json), sha256-checked and cached.

Unlike http_archive, its failures name the pin file and the way out (fetch_pinned).
"""

def fetch_pinned(rctx, extract = True, output = ""):
    """Downloads the pin's archive (sha256-checked, cached), extracted or to `output`.

    Its failures name the pin file and the way out: a wrong hash says which hash the
    archive really has and how to update the pin; an unreachable URL says how to build
    from a local tree instead.
    """
    pin = rctx.attr.pin_file
    urls = rctx.attr.urls
    name = rctx.attr.source_name
    rctx.report_progress("Fetching %s %s" % (name, rctx.attr.version))
    if extract:
        result = rctx.download_and_extract(
            urls,
            sha256 = rctx.attr.sha256,
            stripPrefix = rctx.attr.strip_prefix,
            type = rctx.attr.type,
            allow_fail = True,
        )
    else:
        result = rctx.download(urls, output = output, sha256 = rctx.attr.sha256, allow_fail = True)
    if not result.success:
        # Fetch again without the checksum only to tell a wrong pin from no network.
        probe = rctx.download(urls, output = "unverified-download", allow_fail = True)
        if probe.success:
            rctx.delete("unverified-download")
            fail(("%s: the archive at %s has sha256 %s, but %s pins %s. If the pin is wrong, rewrite it " +
                  "with `python3 -m tools.update_pins %s --archive FILE` (never by hand); if not, the server " +
                  "returned another file.") % (name, urls[0], probe.sha256, pin, rctx.attr.sha256, name))
        fail(("%s: cannot download %s (pinned in %s); is there a network? %s") % (name, urls[0], pin, rctx.attr.offline_advice))

def _source_archive_impl(rctx):
    fetch_pinned(rctx)
    urls = rctx.attr.urls
    name = rctx.attr.source_name
    pin = rctx.attr.pin_file
    for patch in rctx.attr.patches:
        rctx.patch(patch, strip = 1)
    if rctx.attr.build_file:
        rctx.symlink(rctx.attr.build_file, "BUILD.bazel")
    rctx.file(".jax_rocm_source.json", json.encode_indent({
        "name": name,
        "version": rctx.attr.version,
        "sha256": rctx.attr.sha256,
        "url": urls[0],
        "pin": pin,
    }) + "\n")

PIN_ATTRS = {
    "source_name": attr.string(mandatory = True, doc = "The pin's name (xla, jax, ...), for messages."),
    "version": attr.string(doc = "Commit or release the pin names."),
    "urls": attr.string_list(mandatory = True),
    "sha256": attr.string(mandatory = True),
    "strip_prefix": attr.string(),
    "type": attr.string(doc = "Archive type when the URL does not say (zip for wheels)."),
    "pin_file": attr.string(mandatory = True, doc = "Where the pin lives, for messages."),
    "offline_advice": attr.string(mandatory = True, doc = "How to build without the network, for the download failure."),
}

source_archive = repository_rule(
    implementation = _source_archive_impl,
    doc = "A pinned source archive; created by the `sources` extension (//third_party:extensions.bzl).",
    attrs = PIN_ATTRS | {
        "build_file": attr.label(doc = "BUILD file for archives without their own."),
        "patches": attr.label_list(doc = "Patches applied with strip 1, in order."),
    },
)
