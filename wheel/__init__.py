"""wheel/ as a package of the checkout (wheel.wheel_audit, wheel.private.runpath): a regular
package, so that PyPA's `wheel`, which many Pythons have installed, cannot stand in for it
where the checkout is the package root. Nothing here imports PyPA's `wheel`."""
