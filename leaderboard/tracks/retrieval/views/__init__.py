"""What the retrieval track's other tabs show, as plain functions tested without Gradio: one system's detail
(`detail`, with its nuggets in `nugget_views`), the plots' data (`plots`) and the speed chart (`speed_chart`), the
board over time (`over_time`), a drift report (`drift`), the hole fills (`holes`), and numbers computed elsewhere:
figures published by others (`published`) and what model repos report on the Hub (`hub_reported`).
"""
