//! Content in wrappers whose class names look like furniture (issue 37):
//! a WordPress post container classed `category-popular`, a layout wrapper
//! `sidebar-and-content-body`, a theme's `…-widget-wrap` around a
//! `…-seo-copy` section, and the page builders that put every paragraph in a
//! "widget", "module" or "block". On a thin page (two paragraphs) no
//! extractor may keep the tagline, the heading or a caption and drop the
//! body.

use webdup_web::extract::{ExtractConfig, ExtractorKind, extract_with_url};

const FIRST: &str = "The compost bays behind the tool shed reached sixty degrees last week, hot enough to kill \
                     the bindweed roots that volunteers have been pulling out of the raised beds since March.";
const SECOND: &str = "Turn the heap every ten days until the end of the month, keep the lids closed when it \
                      rains, and add the grass cuttings in thin layers so that the middle does not go sour.";

/// A thin post of a small site, its two paragraphs between `open` and `close`.
fn page(open: &str, close: &str) -> String {
    let recent: String =
        (1..=5).map(|i| format!("<li><a href=/p{i}>Seed swap and plot news, part {i}</a></li>")).collect();
    format!(
        "<!doctype html><html lang=en><head><title>Compost heat | Hilltop Gardeners</title></head>\
         <body class=\"post-template-default single single-post\">\
         <div class=site-branding><p class=site-title><a href=/>Hilltop Gardeners</a></p>\
         <p class=site-description>Notes from a community allotment on the hill</p></div>\
         <nav class=main-navigation><ul><li><a href=/>Home</a></li><li><a href=/plots>Plots</a></li>\
         <li><a href=/events>Events</a></li></ul></nav>\
         <div class=hero><img src=gate.jpg alt=\"\"><p class=wp-caption-text>The allotment gate in spring</p></div>\
         <div id=content class=site-content><h1 class=entry-title>Compost heat</h1>\
         {open}<p>{FIRST}</p><p>{SECOND}</p>{close}\
         <aside class=widget-area><section class=widget><h2>Recent posts</h2><ul>{recent}</ul></section></aside></div>\
         <footer class=site-footer><p>Hilltop Gardeners is a volunteer group. Copyright 2026.</p></footer>\
         </body></html>"
    )
}

/// The wrappers, outermost first, as sites and page builders write them.
const CASES: &[(&str, &str, &str)] = &[
    (
        "WordPress post classed category-popular",
        "<div id=post-412 class=\"post-412 post type-post status-publish format-standard hentry category-popular \
         tag-compost\"><div class=entry-content>",
        "</div></div>",
    ),
    (
        "wrapper sidebar-and-content-body",
        "<div class=sidebar-and-content-body><div class=content-column>",
        "</div></div>",
    ),
    (
        "entry-content, widget-wrap, seo-copy",
        "<div class=entry-content><div class=\"ct-banner-widget-wrap\"><section class=\"promo-seo-copy\">",
        "</section></div></div>",
    ),
    (
        "Elementor",
        "<div data-elementor-type=single-post class=\"elementor elementor-412 elementor-location-single\">\
         <section class=\"elementor-section elementor-top-section elementor-element elementor-section-boxed\">\
         <div class=\"elementor-container elementor-column-gap-default\"><div class=\"elementor-column \
         elementor-col-100 elementor-top-column elementor-element\"><div class=\"elementor-widget-wrap \
         elementor-element-populated\"><div class=\"elementor-element elementor-widget \
         elementor-widget-text-editor\" data-widget_type=text-editor.default>\
         <div class=elementor-widget-container>",
        "</div></div></div></div></div></section></div>",
    ),
    (
        "Divi",
        "<div id=et-main-area><div class=\"et_pb_section et_pb_section_0 et_section_regular\"><div class=\"et_pb_row \
         et_pb_row_0\"><div class=\"et_pb_column et_pb_column_4_4 et_pb_column_0\"><div class=\"et_pb_module \
         et_pb_text et_pb_text_0 et_pb_text_align_left et_pb_bg_layout_light\"><div class=et_pb_text_inner>",
        "</div></div></div></div></div></div>",
    ),
    (
        "WPBakery",
        "<div class=\"vc_row wpb_row vc_row-fluid\"><div class=\"wpb_column vc_column_container vc_col-sm-12\">\
         <div class=vc_column-inner><div class=wpb_wrapper><div class=\"wpb_text_column wpb_content_element\">\
         <div class=wpb_wrapper>",
        "</div></div></div></div></div></div>",
    ),
    (
        "Gutenberg",
        "<div class=\"wp-block-group is-layout-constrained wp-block-group-is-layout-constrained\">\
         <div class=\"wp-block-columns is-layout-flex\"><div class=\"wp-block-column is-layout-flow\">",
        "</div></div></div>",
    ),
];

#[test]
fn every_extractor_keeps_a_thin_posts_body_in_furniture_like_wrappers() {
    let mut failures = Vec::new();
    for (case, open, close) in CASES {
        let html = page(open, close);
        for kind in ExtractorKind::ALL {
            let e = extract_with_url(&html, Some("https://hilltop.example/compost-heat/"), &ExtractConfig::new(kind))
                .unwrap();
            if !(e.text.contains("sixty degrees") && e.text.contains("thin layers")) {
                failures.push(format!("{case}, {kind} (as {}): {:?}", e.extractor, e.text));
            }
        }
    }
    assert!(failures.is_empty(), "the body was dropped:\n{}", failures.join("\n"));
}
