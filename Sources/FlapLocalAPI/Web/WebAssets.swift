/// The web page's files (`Web/assets`), built into the binary by the package manager
/// (`embedInCode`): the page needs nothing from disk, and nothing from elsewhere.
enum WebAssets {
    static let html = PackageResources.index_html
    static let script = PackageResources.app_js
    static let style = PackageResources.app_css
    static let calibrate = PackageResources.calibrate_js
}
